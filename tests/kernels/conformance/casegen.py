"""Writes kernel conformance cases for tests/kernels/test_conformance.c.

A case runs one op through Loom's core runtime and states what NumPy says
the result is (or which error it must give). Family modules (cases_*.py in
this directory) define `cases()` returning a list of Case; gen_cases.py
collects them and writes one text file:

  case <name>
  op <OpName>
  attr <name> <kind> <value...>       kinds below
  input <dtype> <rank> <dims...> <values...>
  input variable <dtype> <rank> <dims...> <values...>
  input uninitialized_variable <dtype> <rank> <dims...> <values...>
  expect <dtype> <rank> <dims...> <values...>
  expect variable <input index> <dtype> <rank> <dims...> <values...>
  tolerance <rtol> <atol>
  error <CODE> <message substring to the end of the line>
  outputs <count>                      (error cases: how many results)
  end

Values: floats as hexadecimal (exact), integers in decimal, bools 0/1,
nan / inf / -inf; complex numbers as "re,im" (two floats); strings as "x"
followed by the hex of their bytes (NumPy str / bytes / object arrays are
string tensors). Attr kinds: int, float, bool, type, string, shape
(rank dims...; rank -1 = unknown), ints / floats / bools / types
(count values...), strings (count values..., each as in string
tensors), tensor (a tensor as in input lines).

Resource inputs: "input variable" makes a variable (VarHandleOp with the
value's dtype and shape) holding the value and passes its resource
tensor; "uninitialized_variable" one never assigned (the values are
ignored). "expect variable i" states the value input i's variable holds
after the op (ReadVariableOp). In Python: Variable(value) as an input and
Case(..., variables={i: value}).
"""

import numpy as np

# NumPy dtypes (and the two 16-bit floats) to TensorFlow dtype names.
_NAMES = {
    np.dtype(np.float32): "float",
    np.dtype(np.float64): "double",
    np.dtype(np.float16): "half",
    np.dtype(np.int32): "int32",
    np.dtype(np.int64): "int64",
    np.dtype(np.int8): "int8",
    np.dtype(np.int16): "int16",
    np.dtype(np.uint8): "uint8",
    np.dtype(np.uint16): "uint16",
    np.dtype(np.uint32): "uint32",
    np.dtype(np.uint64): "uint64",
    np.dtype(np.bool_): "bool",
    np.dtype(np.complex64): "complex64",
    np.dtype(np.complex128): "complex128",
}


class BFloat16:
    """A bfloat16 tensor: float32 values already rounded to bfloat16."""

    def __init__(self, values):
        self.values = round_bfloat16(np.asarray(values, dtype=np.float32))

    @property
    def shape(self):
        return self.values.shape


def round_bfloat16(values):
    """Rounds float32 values to bfloat16 (nearest even), kept as float32."""
    values = np.asarray(values, dtype=np.float32)
    # At least 1-d: NumPy refuses uint64 >> int on 0-d arrays.
    bits = np.atleast_1d(values).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    out = (rounded << 16).astype(np.uint32).view(np.float32)
    out = out.reshape(values.shape)
    return np.where(np.isnan(values), values, out)


class Variable:
    """A resource input: a variable holding `value` (never assigned when
    initialized is False; `value` then gives its dtype and shape)."""

    def __init__(self, value, initialized=True):
        self.value = value
        self.initialized = initialized


class Case:
    def __init__(self, name, op, inputs, expect=None, attrs=None,
                 rtol=0.0, atol=0.0, error=None, outputs=None,
                 variables=None):
        self.name = name
        self.op = op
        self.inputs = list(inputs)
        self.expect = [] if expect is None else list(expect)
        self.attrs = attrs or {}
        self.rtol = rtol
        self.atol = atol
        self.error = error  # (CODE, substring)
        self.outputs = outputs
        self.variables = variables or {}  # input index -> value after


def dtype_name(value):
    if isinstance(value, BFloat16):
        return "bfloat16"
    if np.asarray(value).dtype.kind in "USO":
        return "string"
    return _NAMES[np.asarray(value).dtype]


def _format_value(x, kind):
    if kind == "string":
        data = x if isinstance(x, bytes) else str(x).encode("utf-8")
        return "x" + data.hex()
    if kind in ("complex64", "complex128"):
        return "%s,%s" % (_format_value(x.real, "double"),
                          _format_value(x.imag, "double"))
    if kind == "bool":
        return "1" if x else "0"
    if kind in ("float", "double", "half", "bfloat16"):
        x = float(x)
        if np.isnan(x):
            return "nan"
        if np.isinf(x):
            return "inf" if x > 0 else "-inf"
        # Exact and short: the mantissa's trailing zeros dropped.
        mantissa, exponent = x.hex().split("p")
        return mantissa.rstrip("0").rstrip(".") + "p" + exponent
    return str(int(x))


def _format_tensor(value):
    name = dtype_name(value)
    array = value.values if isinstance(value, BFloat16) else np.asarray(value)
    parts = [name, str(array.ndim)] + [str(d) for d in array.shape]
    parts += [_format_value(x, name) for x in array.reshape(-1)]
    return " ".join(parts)


def _format_attr(name, value):
    kind, payload = value
    if kind in ("int", "float", "bool"):
        return "attr %s %s %s" % (name, kind, _format_value(payload, kind))
    if kind == "type":
        return "attr %s type %s" % (name, payload)
    if kind == "tensor":
        return "attr %s tensor %s" % (name, _format_tensor(payload))
    if kind == "string":
        return "attr %s string %s" % (name, payload)
    if kind == "shape":
        if payload is None:
            return "attr %s shape -1" % name
        return "attr %s shape %d %s" % (name, len(payload),
                                        " ".join(str(d) for d in payload))
    if kind == "strings":
        items = [_format_value(p, "string") for p in payload]
        return "attr %s strings %d %s" % (name, len(items), " ".join(items))
    if kind in ("ints", "floats", "bools", "types"):
        element = {"ints": "int", "floats": "float", "bools": "bool",
                   "types": "type"}[kind]
        items = [p if element == "type" else _format_value(p, element)
                 for p in payload]
        return "attr %s %s %d %s" % (name, kind, len(items), " ".join(items))
    raise ValueError("unknown attr kind %r" % kind)


def write(cases, path):
    names = set()
    with open(path, "w") as out:
        for case in cases:
            if case.name in names:
                raise ValueError("duplicate case name %s" % case.name)
            names.add(case.name)
            out.write("case %s\nop %s\n" % (case.name, case.op))
            for name in sorted(case.attrs):
                out.write(_format_attr(name, case.attrs[name]) + "\n")
            for value in case.inputs:
                if isinstance(value, Variable):
                    kind = ("variable" if value.initialized
                            else "uninitialized_variable")
                    out.write("input %s %s\n" %
                              (kind, _format_tensor(value.value)))
                else:
                    out.write("input " + _format_tensor(value) + "\n")
            for value in case.expect:
                out.write("expect " + _format_tensor(value) + "\n")
            for index in sorted(case.variables):
                out.write("expect variable %d %s\n" %
                          (index, _format_tensor(case.variables[index])))
            if case.rtol or case.atol:
                out.write("tolerance %r %r\n" % (case.rtol, case.atol))
            if case.error:
                out.write("error %s %s\n" % case.error)
                out.write("outputs %d\n" % (1 if case.outputs is None
                                              else case.outputs))
            out.write("end\n")
