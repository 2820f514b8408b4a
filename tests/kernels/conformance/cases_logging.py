"""Conformance cases of Assert (src/kernels/logging_ops.c).

A false condition fails with INVALID_ARGUMENT "assertion failed: [d0] [d1]
...", each data tensor written as TensorFlow's Tensor::SummarizeValue
(print_v2 false) writes it. `summarize` below restates that rule over the
NumPy arrays: the first `limit` elements in row-major order, a bracket
pair per dimension but the innermost (opened only while elements remain),
"..." inside the innermost brackets where the elements ran out (not at
rank 1) and after everything when some were left out; scalars and
vectors are bare elements. Floats print as the shortest of %.6g / %.9g
(doubles %.15g / %.17g) that reads back exactly, bools as 1 / 0,
strings C-escaped.
"""

import numpy as np

from casegen import BFloat16, Case

F32, F64, I32, I64 = np.float32, np.float64, np.int32, np.int64


def _float_text(value, single):
    digits = (6, 9) if single else (15, 17)
    text = "%.*g" % (digits[0], value)
    parse = np.float32 if single else np.float64
    if not np.isnan(value) and parse(text) != value:
        text = "%.*g" % (digits[1], value)
    return text


def _escape(data):
    escapes = {ord("\n"): b"\\n", ord("\r"): b"\\r", ord("\t"): b"\\t",
               ord('"'): b'\\"', ord("'"): b"\\'", ord("\\"): b"\\\\"}
    out = bytearray()
    for byte in data:
        if byte in escapes:
            out += escapes[byte]
        elif byte < 0x80 and not 0x20 <= byte < 0x7F:
            out += b"\\%03o" % byte
        else:
            out.append(byte)
    # Bytes from 0x80 on are kept: the samples are valid UTF-8.
    return out.decode("utf-8")


def _element(value, kind):
    if kind == "bf16":
        return _float_text(np.float32(value), True)
    if isinstance(value, (bytes, str)):
        data = value.encode() if isinstance(value, str) else value
        return _escape(data)
    if isinstance(value, np.bool_):
        return "1" if value else "0"
    if isinstance(value, np.floating):
        return _float_text(value, value.dtype != np.float64)
    return str(int(value))


def summarize(value, limit):
    """TensorFlow's SummarizeValue(limit) of a NumPy array (or BFloat16)."""
    kind = "bf16" if isinstance(value, BFloat16) else None
    array = np.asarray(value.values if kind else value)
    flat = array.reshape(-1)
    count = flat.size
    if limit < 0:
        limit = count
    limit = min(limit, count)
    texts = [_element(flat[i], kind) for i in range(limit)]
    if array.ndim == 0:
        out = " ".join(texts)
    else:
        out = []
        index = [0]

        def dim(d):
            if index[0] >= limit:
                return
            if d == array.ndim - 1:
                for i in range(array.shape[d]):
                    if index[0] >= limit:
                        if d != 0:
                            out.append("...")
                        return
                    if i > 0:
                        out.append(" ")
                    out.append(texts[index[0]])
                    index[0] += 1
                return
            for _ in range(array.shape[d]):
                opened = index[0] < limit
                if opened:
                    out.append("[")
                dim(d + 1)
                if opened or index[0] < limit:
                    out.append("]")

        dim(0)
        out = "".join(out)
    if count > limit:
        out += "..."
    return out


def _message(data, limit):
    return "assertion failed: " + " ".join(
        "[%s]" % summarize(d, limit) for d in data)


def _assert(name, data, limit=None, condition=False):
    attrs = {} if limit is None else {"summarize": ("int", limit)}
    inputs = [np.array(condition)] + list(data)
    if condition:
        return Case(name, "Assert", inputs, [], attrs=attrs)
    text = _message(data, 3 if limit is None else limit)
    return Case(name, "Assert", inputs, attrs=attrs,
                error=("INVALID_ARGUMENT", text), outputs=0)


def cases():
    rng = np.random.default_rng(20261127)
    out = []
    x = np.arange(6, dtype=F32).reshape(2, 3) / 4
    out.append(_assert("Assert_true_passes", [x], condition=True))
    out.append(Case("Assert_true_condition_as_vector_passes", "Assert",
                    [np.array([True]), x], []))
    # Default summarize (3) and others, over ranks 0 to 3.
    for limit in (None, 0, 1, 2, 4, 6, 7, -1):
        label = "default" if limit is None else str(limit).replace("-", "m")
        out.append(_assert("Assert_matrix_summarize_%s" % label, [x], limit))
    cube = np.arange(24, dtype=I32).reshape(2, 3, 4)
    for limit in (3, 5, 12, 13, 24):
        out.append(_assert("Assert_rank3_summarize_%d" % limit, [cube],
                           limit))
    out.append(_assert("Assert_scalar", [np.array(7, I64)]))
    out.append(_assert("Assert_vector_cut", [np.arange(10, dtype=I32)]))
    out.append(_assert("Assert_empty_vector", [np.zeros(0, F32)]))
    out.append(_assert("Assert_empty_matrix", [np.zeros((2, 0), F32)]))
    out.append(_assert("Assert_several_data",
                       [np.array([1.5, -2.25], F32), np.array(3, I32),
                        np.array([True, False, True, True])], 5))
    # Every dtype TensorFlow prints.
    samples = {
        "float32": np.array([0.1, 1e10, -3.0, 1.0 / 3.0], F32),
        "float64": np.array([0.1, 1e300, -3.0, 1.0 / 3.0], F64),
        "float16": np.array([0.1, 65504, -3.0, 1.0 / 3.0], np.float16),
        "bfloat16": BFloat16([0.1, 1e10, -3.0, 1.0 / 3.0]),
        "int8": np.array([-128, 127, 0, 5], np.int8),
        "int16": np.array([-32768, 32767, 0, 5], np.int16),
        "int64": np.array([-(2 ** 63), 2 ** 63 - 1, 0, 5], I64),
        "uint8": np.array([255, 0, 7, 5], np.uint8),
        "uint16": np.array([65535, 0, 7, 5], np.uint16),
        "uint32": np.array([2 ** 32 - 1, 0, 7, 5], np.uint32),
        "uint64": np.array([2 ** 64 - 1, 0, 7, 5], np.uint64),
        "bool": np.array([True, False, False, True]),
        "string": np.array([b"a", b"tab\there", b"quote\"'\\",
                            b"\x01\x7f\xc3\xa9"], dtype=object),
    }
    for name, value in samples.items():
        out.append(_assert("Assert_dtype_%s" % name, [value], 4))
    out.append(_assert("Assert_float_specials",
                       [np.array([np.inf, -np.inf, np.nan, -0.0], F32)], 4))
    out.append(_assert("Assert_float_random",
                       [rng.standard_normal(8).astype(F32)], 8))
    out.append(_assert("Assert_double_random",
                       [rng.standard_normal(8).astype(F64)], 8))
    # Complex numbers print as "?".
    out.append(Case("Assert_complex", "Assert",
                    [np.array(False), np.array([1 + 2j, 3j, 4], np.complex64)],
                    error=("INVALID_ARGUMENT", "assertion failed: [? ?...]"),
                    outputs=0, attrs={"summarize": ("int", 2)}))
    # The condition must be a scalar ([1] passes as one).
    out.append(Case("Assert_condition_vector_of_one", "Assert",
                    [np.array([False]), np.array(1, I32)],
                    error=("INVALID_ARGUMENT", "assertion failed: [1]"),
                    outputs=0))
    out.append(Case("Assert_condition_not_scalar", "Assert",
                    [np.array([True, True]), x],
                    error=("INVALID_ARGUMENT", "In[0] should be a scalar: [2]"),
                    outputs=0))
    out.append(Case("Assert_condition_not_bool", "Assert",
                    [np.array(1, I32), x],
                    error=("INVALID_ARGUMENT", "Assert"), outputs=0))
    # `data` cannot be empty: TensorFlow's op def gives T (list(type))
    # the minimum length 1 that an input list implies.
    out.append(Case("Assert_empty_data", "Assert", [np.array(True)],
                    error=("INVALID_ARGUMENT",
                           "Op 'Assert': length for attr 'T' of 0 must be "
                           "at least minimum 1"), outputs=0))
    return out
