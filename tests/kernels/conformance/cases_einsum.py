"""Einsum against NumPy's einsum: matrix products in every layout (in place
or transposed operands, outputs in another order), batch labels, ellipsis
broadcasting, diagonals, traces, summed labels, outputs repeating a label
(TensorFlow's inflation, "i->ii"), one-input equations, empty tensors, 16-bit floats computed in float, random equations, operands and
outputs above rank 8 (up to TensorFlow's 254, with up to 52 letters), and
TensorFlow's errors."""

import numpy as np

from casegen import BFloat16, Case, round_bfloat16

DTYPES = [np.float32, np.float64, np.float16, "bfloat16", np.int32, np.int64]


def _name(dtype):
    return "bfloat16" if dtype == "bfloat16" else np.dtype(dtype).name


def _random(rng, dtype, shape):
    if dtype in (np.int32, np.int64):
        return rng.integers(-9, 9, size=shape, endpoint=True).astype(dtype)
    values = rng.standard_normal(shape)
    if dtype == "bfloat16":
        return round_bfloat16(values.astype(np.float32))
    return values.astype(dtype)


def _einsum(equation, *xs):
    """np.einsum, and for an output repeating a label (which NumPy refuses)
    the einsum to its distinct labels with each value placed where the
    repeated axes hold the same index, zeros elsewhere."""
    inputs, output = equation.split("->")
    distinct = "".join(dict.fromkeys(output))
    if "." in output or distinct == output:
        return np.einsum(equation, *xs)
    compact = np.asarray(np.einsum(inputs + "->" + distinct, *xs))
    out = np.zeros([compact.shape[distinct.index(c)] for c in output],
                   compact.dtype)
    for index in np.ndindex(*compact.shape):
        out[tuple(index[distinct.index(c)] for c in output)] = compact[index]
    return out


def _expect(equation, xs, dtype):
    if dtype in (np.int32, np.int64):
        return _einsum(equation, *xs).astype(dtype)
    z = _einsum(equation, *[x.astype(np.float64) for x in xs])
    if dtype == "bfloat16":
        return BFloat16(np.asarray(z, np.float32))
    return np.asarray(z).astype(dtype)


def _tolerance(dtype, depth):
    if dtype == np.float32:
        return dict(rtol=1e-5, atol=1e-6 * (depth + 1))
    if dtype == np.float64:
        return dict(rtol=1e-12, atol=1e-13 * (depth + 1))
    if dtype == np.float16:
        return dict(rtol=2e-3, atol=2e-3 * (depth + 1))
    if dtype == "bfloat16":
        return dict(rtol=1.6e-2, atol=1.6e-2 * (depth + 1))
    return {}


def _wrap(values, dtype):
    return BFloat16(values) if dtype == "bfloat16" else values


# name: (equation, input shapes, summed depth for the tolerance)
EQUATIONS = {
    "matmul": ("ij,jk->ik", [(3, 4), (4, 5)], 4),
    "matmul_ta": ("ji,jk->ik", [(4, 3), (4, 5)], 4),
    "matmul_tb": ("ij,kj->ik", [(3, 4), (5, 4)], 4),
    "matmul_out_t": ("ij,jk->ki", [(3, 4), (4, 5)], 4),
    "batch": ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)], 4),
    "attention": ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)], 5),
    "batch_middle": ("ibj,jbk->bki", [(3, 2, 4), (4, 2, 5)], 4),
    "dot": ("i,i->", [(7,), (7,)], 7),
    "outer": ("i,j->ij", [(3,), (4,)], 1),
    "matvec": ("ij,j->i", [(3, 4), (4,)], 4),
    "two_contract": ("ijk,jkl->il", [(2, 3, 4), (3, 4, 5)], 12),
    "ellipsis_batch": ("...ij,...jk->...ik", [(2, 1, 3, 4), (3, 4, 5)], 4),
    "ellipsis_broadcast": ("...ij,...jk->...ik", [(1, 3, 4), (2, 4, 5)], 4),
    "ellipsis_both_broadcast": ("...ij,...jk->...ik",
                                [(2, 1, 3, 4), (1, 3, 4, 5)], 4),
    "ellipsis_middle": ("i...j,j...->...i", [(3, 2, 4), (4, 2)], 4),
    "summed_in_one": ("ij,jk->i", [(3, 4), (4, 5)], 20),
    "diagonal_operand": ("iij,jk->ik", [(3, 3, 4), (4, 5)], 4),
    "hadamard": ("ij,ij->ij", [(3, 4), (3, 4)], 1),
    "transpose": ("ij->ji", [(3, 4)], 1),
    "permute3": ("abc->cab", [(2, 3, 4)], 1),
    "trace": ("ii->", [(4, 4)], 4),
    "diagonal": ("ii->i", [(4, 4)], 1),
    "diagonal3_keep": ("iij->ji", [(3, 3, 2)], 1),
    "inflate": ("i->ii", [(4,)], 1),
    "inflate3": ("ij->jiij", [(3, 2)], 1),
    "inflate_product": ("ij,jk->kiik", [(3, 4), (4, 2)], 4),
    "diagonal_to_inflate": ("iij->jj", [(3, 3, 2)], 3),
    "sum_all": ("ij->", [(3, 4)], 12),
    "sum_rows": ("ij->j", [(3, 4)], 3),
    "ellipsis_sum": ("...j->...", [(2, 3, 4)], 4),
    "identity": ("ij->ij", [(3, 4)], 1),
    "scalar": ("->", [()], 1),
    "scalar_times": (",ij->ij", [(), (2, 3)], 1),
    "empty_free": ("ij,jk->ik", [(0, 4), (4, 5)], 4),
    "empty_contract": ("ij,jk->ik", [(3, 0), (0, 5)], 1),
    "empty_sum": ("ij->i", [(3, 0)], 1),
}

LARGE = {
    "large_matmul": ("ij,jk->ik", [(70, 90), (90, 80)], 90),
    "large_batch": ("bij,bkj->bik", [(6, 40, 50), (6, 30, 50)], 50),
    "large_permuted": ("bij,jbk->kbi", [(4, 30, 40), (40, 4, 20)], 40),
    # Passes large enough to split over the pool.
    "large_transpose": ("ij->ji", [(300, 500)], 1),
    "large_sum": ("abc->ca", [(64, 50, 70)], 50),
    "large_out_permuted": ("bij,bjk->kib", [(16, 60, 30), (16, 30, 70)], 30),
}


def _equation_cases(rng):
    out = []
    for dtype in DTYPES:
        equations = dict(EQUATIONS)
        if dtype in (np.float32, np.int64):
            equations.update(LARGE)
        for name, (equation, shapes, depth) in equations.items():
            xs = [_random(rng, dtype, s) for s in shapes]
            out.append(Case("Einsum_%s_%s" % (_name(dtype), name), "Einsum",
                            [_wrap(x, dtype) for x in xs],
                            [_expect(equation, xs, dtype)],
                            {"equation": ("string", equation),
                             "N": ("int", len(xs))},
                            **_tolerance(dtype, depth)))
    # Integer products wrap as TensorFlow's.
    x = np.array([[100000, 3]], np.int32)
    y = np.array([[100000], [7]], np.int32)
    out.append(Case("Einsum_int32_wraps", "Einsum", [x, y],
                    [np.einsum("ij,jk->ik", x.astype(np.int64),
                               y.astype(np.int64)).astype(np.int32)],
                    {"equation": ("string", "ij,jk->ik"), "N": ("int", 2)}))
    return out


def _random_equation_cases(rng, count=120):
    """Random one- and two-input equations over labels a-f: repeated labels,
    summed labels, ellipses anywhere with dims of 1 broadcasting, outputs
    in any order; float64 against NumPy."""
    out = []
    letters = "abcdef"
    while len(out) < count:
        n = int(rng.integers(1, 3))
        sizes = {c: int(rng.integers(1, 4)) for c in letters}
        ellipsis = rng.random() < 0.4
        ellipsis_dims = [int(rng.integers(1, 3))
                         for _ in range(int(rng.integers(0, 3)))]
        subscripts, shapes = [], []
        for _ in range(n):
            labels = [letters[int(rng.integers(0, 6))]
                      for _ in range(int(rng.integers(0, 4)))]
            shape = [sizes[c] for c in labels]
            text = "".join(labels)
            if ellipsis and rng.random() < 0.8:
                kept = int(rng.integers(0, len(ellipsis_dims) + 1))
                dims = [1 if rng.random() < 0.3 else d
                        for d in ellipsis_dims[len(ellipsis_dims) - kept:]]
                at = int(rng.integers(0, len(labels) + 1))
                text = "".join(labels[:at]) + "..." + "".join(labels[at:])
                shape = shape[:at] + dims + shape[at:]
            subscripts.append(text)
            shapes.append(tuple(shape))
        present = sorted(set("".join(subscripts)) - {"."})
        output = [c for c in present if rng.random() < 0.5]
        rng.shuffle(output)
        output = "".join(output)
        if any("..." in t for t in subscripts):
            at = int(rng.integers(0, len(output) + 1))
            output = output[:at] + "..." + output[at:]
        equation = ",".join(subscripts) + "->" + output
        xs = [rng.standard_normal(shape) for shape in shapes]
        try:
            want = np.einsum(equation, *xs)
        except ValueError:
            continue  # NumPy refuses it (dims that do not broadcast)
        out.append(Case("Einsum_random_%d" % len(out), "Einsum", xs,
                        [np.asarray(want, np.float64)],
                        {"equation": ("string", equation),
                         "N": ("int", n)}, rtol=1e-10, atol=1e-10))
    return out


# Above rank 8 (shapes spill; the kernel folds what stays adjacent):
# name: (equation, input shapes, summed depth for the tolerance). Dims are
# mostly 1 and 2 to keep the case file small.
LARGE_RANKS = {
    "rank9_matmul": ("abcdefghi,ij->abcdefghj",
                     [(2, 1, 2, 1, 1, 2, 1, 1, 3), (3, 2)], 3),
    "rank10_batch": ("abcdefghij,abcdefghjk->abcdefghik",
                     [(2, 1, 2, 1, 1, 1, 1, 2, 3, 2),
                      (2, 1, 2, 1, 1, 1, 1, 2, 2, 3)], 2),
    "rank10_contract_transposed": ("abcdefghij,jkc->kjhgfedbia",
                                   [(2, 1, 3, 1, 1, 1, 1, 1, 2, 2),
                                    (2, 2, 3)], 3),
    "rank12_contract_many": ("abcdefghijkl,lkjihgfedm->abcm",
                             [(2, 1, 2, 2, 1, 1, 2, 1, 1, 2, 1, 2),
                              (2, 1, 2, 1, 1, 2, 1, 1, 2, 3)], 32),
    "rank12_reduce": ("abcdefghijkl->lc",
                      [(2, 1, 2, 1, 1, 2, 1, 1, 1, 2, 1, 3)], 8),
    "rank12_sum_all": ("abcdefghijkl->",
                       [(2, 1, 2, 1, 1, 2, 1, 1, 1, 2, 1, 3)], 48),
    "rank10_reverse": ("abcdefghij->jihgfedcba",
                       [(2, 1, 2, 1, 2, 1, 1, 2, 1, 3)], 1),
    "rank10_rotate": ("abcdefghij->fghijabcde",
                      [(2, 1, 2, 1, 2, 1, 1, 2, 1, 3)], 1),
    "rank10_diagonal": ("aabcdefghi->iabcdefgh",
                        [(2, 2, 1, 2, 1, 1, 1, 1, 2, 3)], 1),
    "rank10_trace_pairs": ("abcdeabcde->",
                           [(2, 1, 2, 1, 2, 2, 1, 2, 1, 2)], 8),
    "rank12_diagonal_keep": ("abcabcdefghi->ihgfedcba",
                             [(2, 1, 2, 2, 1, 2, 1, 2, 1, 1, 2, 3)], 1),
    "rank9_inflate": ("abcdefghi->abcdefghii",
                      [(2, 1, 1, 1, 1, 1, 1, 2, 3)], 1),
    "rank10_outer": ("abcde,fghij->abcdefghij",
                     [(2, 1, 2, 1, 2), (1, 3, 1, 2, 1)], 1),
    "ellipsis9_matmul": ("...ij,...jk->...ik",
                         [(2, 1, 2, 1, 1, 2, 1, 1, 2, 3, 2),
                          (1, 2, 2, 1, 1, 1, 1, 1, 1, 2, 2)], 2),
    "ellipsis10_sum": ("...i->...", [(2, 1, 2, 1, 1, 2, 1, 1, 2, 1, 3)], 3),
    "ellipsis9_middle": ("a...b,b...->...a",
                         [(2, 2, 1, 1, 2, 1, 1, 1, 2, 1, 3),
                          (3, 2, 1, 1, 1, 1, 1, 1, 2, 1)], 3),
    "ellipsis9_broadcast_one": ("...,i...->i...",
                                [(2, 1, 1, 2, 1, 1, 1, 2, 1),
                                 (3, 1, 2, 1, 1, 1, 1, 1, 1, 2)], 1),
    "labels_30": ("abcdefghijklmnop,ijklmnopqrstuvwxyzABCD->"
                  "DCBAzyxwvutsrqabcdefgh",
                  [(2, 1, 1, 1, 2, 1, 1, 1, 2, 1, 1, 2, 1, 1, 1, 1),
                   (2, 1, 1, 2, 1, 1, 1, 1, 1, 2, 1, 1, 1, 1, 2, 1, 1, 1,
                    1, 1, 2, 1)], 4),
}

# The large-rank equations every dtype runs (the rest run in float32 and
# float64).
LARGE_RANKS_ALL_DTYPES = ("rank10_batch", "rank12_reduce", "rank10_diagonal",
                          "ellipsis9_matmul")


def _large_rank_cases(rng):
    out = []
    for dtype in DTYPES:
        for name, (equation, shapes, depth) in LARGE_RANKS.items():
            if (dtype not in (np.float32, np.float64) and
                    name not in LARGE_RANKS_ALL_DTYPES):
                continue
            xs = [_random(rng, dtype, s) for s in shapes]
            out.append(Case("Einsum_%s_%s" % (_name(dtype), name), "Einsum",
                            [_wrap(x, dtype) for x in xs],
                            [_expect(equation, xs, dtype)],
                            {"equation": ("string", equation),
                             "N": ("int", len(xs))},
                            **_tolerance(dtype, depth)))
    return out


def _large_rank_error_cases():
    f32 = np.float32
    rank9 = np.zeros((1, 1, 1, 1, 1, 1, 1, 2, 3), f32)
    rank10 = np.zeros((2,) + (1,) * 9, f32)
    return [
        _error("labels_above_rank", "abcdefghij->a", [rank9],
               "INVALID_ARGUMENT",
               "Expected input 0 to have rank 10 but got: 9"),
        _error("labels_above_rank_ellipsis", "...abcdefghijkl->a", [rank10],
               "INVALID_ARGUMENT",
               "Expected input 0 to have rank at least 12 but got: 10"),
        _error("rank9_dimension_mismatch", "abcdefghi,i->a",
               [rank9, np.zeros(2, f32)], "INVALID_ARGUMENT",
               "Expected dimension 3 at axis 0 of the input shaped [2] but "
               "got dimension 2"),
        _error("rank10_no_broadcast", "...,...->...",
               [rank10, np.zeros((3,) + (1,) * 9, f32)], "INVALID_ARGUMENT",
               "Einsum: the ellipsis dimensions of inputs shaped "
               "[2,1,1,1,1,1,1,1,1,1] and [3,1,1,1,1,1,1,1,1,1] do not "
               "broadcast"),
        _error("labels_53", "abcdefghijklmnopqrstuvwxyz,"
               "ABCDEFGHIJKLMNOPQRSTUVWXYZ0->a",
               [np.zeros((1,) * 26, f32), np.zeros((1,) * 27, f32)],
               "INVALID_ARGUMENT",
               "Einsum: more than 52 distinct labels in einsum equation"),
    ]


def _error(name, equation, xs, code, text):
    return Case("Einsum_error_" + name, "Einsum", xs,
                attrs={"equation": ("string", equation),
                       "N": ("int", len(xs))},
                error=(code, text))


def _error_cases():
    f32 = np.float32
    a = np.zeros((2, 3), f32)
    b = np.zeros((4, 5), f32)
    return [
        _error("no_arrow", "ij,jk", [a, b], "INVALID_ARGUMENT",
               "Expecting exactly one '->' in einsum equation: ij,jk"),
        _error("two_arrows", "ij->jk->k", [a], "INVALID_ARGUMENT",
               "Expecting exactly one '->' in einsum equation: ij->jk->k"),
        _error("three_inputs", "i,i,i->i", [np.zeros(2, f32)] * 3,
               "INVALID_ARGUMENT",
               "Expecting 1 or 2 input subscripts in equation 'i,i,i->i' but "
               "got: 3"),
        _error("dimension_mismatch", "ij,jk->ik", [a, b], "INVALID_ARGUMENT",
               "Expected dimension 3 at axis 0 of the input shaped [4,5] but "
               "got dimension 4"),
        _error("rank_mismatch", "ijk,jk->i", [a, b], "INVALID_ARGUMENT",
               "Expected input 0 to have rank 3 but got: 2"),
        _error("rank_at_least", "...ijk->i", [a], "INVALID_ARGUMENT",
               "Expected input 0 to have rank at least 3 but got: 2"),
        _error("inputs_count", "ij,jk->ik", [a], "INVALID_ARGUMENT",
               "Expected 2 inputs but got: 1"),
        _error("output_label_unknown", "ij->ik", [a], "INVALID_ARGUMENT",
               "Einsum: output label 'k' appears in no input subscript"),
        _error("missing_output_ellipsis", "...ij->ij",
               [np.zeros((2, 2, 3), f32)], "INVALID_ARGUMENT",
               "Output contains 1 broadcasting dimension(s) but no ellipsis "
               "(...) was found in the output subscripts."),
        _error("bad_ellipsis", "i..j->ij", [a], "INVALID_ARGUMENT",
               "Einsum: '.' outside an ellipsis ('...') in einsum equation: "
               "i..j->ij"),
        _error("two_ellipses", "...i...->i", [a], "INVALID_ARGUMENT",
               "Einsum: more than one ellipsis in a subscript"),
        _error("no_broadcast", "...i,...i->...",
               [np.zeros((2, 3), f32), np.zeros((4, 3), f32)],
               "INVALID_ARGUMENT",
               "Einsum: the ellipsis dimensions of inputs shaped [2,3] and "
               "[4,3] do not broadcast"),
        Case("Einsum_error_bool_not_computed", "Einsum",
             [np.zeros((2, 2), np.bool_)],
             attrs={"equation": ("string", "ij->ji"), "N": ("int", 1)},
             error=("NOT_FOUND", "No registered 'Einsum' kernel for 'CPU' "
                    "devices compatible with attributes {T=DT_BOOL}")),
    ]


def cases():
    rng = np.random.default_rng(20261127)
    return (_equation_cases(rng) + _random_equation_cases(rng) +
            _error_cases() + _large_rank_cases(rng) +
            _large_rank_error_cases())
