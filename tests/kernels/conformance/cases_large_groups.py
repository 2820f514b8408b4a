"""Shape-general kernels past their folded-group limits, against NumPy.

Each kernel folds its tensors' dims into groups (size-1 dims drop,
neighbours that behave alike merge) and runs a plan of at most 8 (copies:
16) groups; more groups than that run as a loop around the plan (issue 24:
TensorFlow's ranks go to 254). Every case here has more groups than the
plan takes: ranks 10 to 24 whose dims alternate (2, 1, 2, 1, ...; 2, 3,
2, 3, ...) with every other dim repeated, reversed, sliced, broadcast or
reduced, including empty tensors, for 1-byte and 8-byte dtypes and more.
"""

import numpy as np

from casegen import Case

I32 = np.int32
I64 = np.int64


def _values(rng, dtype, shape):
    """Small values of `dtype`: short in the case file, distinct enough."""
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if np.dtype(dtype).kind == "f":
        return (rng.integers(-40, 40, size=shape) / 4).astype(dtype)
    if np.dtype(dtype).kind == "u":
        return rng.integers(0, 100, size=shape).astype(dtype)
    return rng.integers(-100, 100, size=shape).astype(dtype)


def _name(dtype):
    return np.dtype(dtype).name


def _tile(rng):
    out = []
    # [2, 1] * 9 tiled by [1, 2] * 9: ten groups (each repeated dim starts
    # one); the same with a dim of 3 in front and an empty one.
    specs = [
        ("rank18", [2, 1] * 9, [1, 2] * 9),
        ("rank18_lead", [3, 1] + [2, 1] * 8, [1, 1] + [1, 2] * 8),
        ("rank9_all", [2] * 9, [2] * 9),
        ("rank14_empty", [2, 1] * 6 + [0, 1], [1, 2] * 7),
    ]
    dtypes = {"rank18": (np.int8, np.uint16), "rank18_lead": (np.bool_,),
              "rank9_all": (np.int8,),
              "rank14_empty": (np.int8, np.float64)}
    for name, shape, multiples in specs:
        for dtype in dtypes[name]:
            x = _values(rng, dtype, shape)
            out.append(Case("LargeGroups_Tile_%s_%s" % (_name(dtype), name),
                            "Tile", [x, np.array(multiples, I32)],
                            [np.tile(x, multiples)]))
    return out


def _reverse(rng):
    out = []
    # Seventeen and more groups of 2 that alternate reversed and kept.
    specs = [
        ("rank17_even", [2] * 17, list(range(0, 17, 2))),
        ("rank21_ones", [2, 2, 1, 2] * 5 + [2],
         [a for a in range(21) if a % 2 == 0]),
        ("rank17_odd_negative", [2] * 17, [-1 - a for a in range(1, 17, 2)]),
        ("rank18_empty", [2] * 9 + [0] + [2] * 8, list(range(0, 18, 2))),
    ]
    dtypes = {"rank17_even": (np.uint8, np.int64),
              "rank21_ones": (np.int64, np.float32),
              "rank17_odd_negative": (np.uint8,),
              "rank18_empty": (np.uint8,)}
    for name, shape, axes in specs:
        for dtype in dtypes[name]:
            x = _values(rng, dtype, shape)
            expect = np.flip(x, [a % len(shape) for a in axes]).copy()
            out.append(Case("LargeGroups_ReverseV2_%s_%s" % (_name(dtype),
                                                             name),
                            "ReverseV2", [x, np.array(axes, I32)], [expect]))
    return out


def _transpose(rng):
    out = []
    shuffled = list(rng.permutation(16))
    specs = [
        ("rank10_reversed", [2] * 10, list(range(9, -1, -1))),
        # Seventeen groups: more than one copy takes.
        ("rank17_reversed", [2] * 17, list(range(16, -1, -1))),
        ("rank10_2x3_swapped", [2, 3] * 5,
         [i ^ 1 for i in range(10)]),  # neighbours swap: no two stay
        ("rank16_shuffled", [2] * 16, shuffled),
        ("rank14_ones", [2, 1, 2, 2, 1, 2, 2] * 2,
         list(range(13, -1, -1))),
        ("rank12_empty", [2] * 6 + [0] + [2] * 5, list(range(11, -1, -1))),
    ]
    for name, shape, perm in specs:
        for dtype in (np.int8, np.float64, np.complex64):
            if name in ("rank17_reversed",
                        "rank16_shuffled") and dtype != np.int8:
                continue
            x = _values(rng, dtype, shape) if dtype != np.complex64 else (
                _values(rng, np.float32, shape) +
                1j * _values(rng, np.float32, shape)).astype(np.complex64)
            out.append(Case("LargeGroups_Transpose_%s_%s" % (_name(dtype),
                                                             name),
                            "Transpose", [x, np.array(perm, I64)],
                            [np.transpose(x, perm).copy()]))
    return out


def _slices(rng):
    out = []
    # [3, 2] * 5: every dim sliced, so none is taken whole and nothing
    # folds (ten dims).
    shape = [3, 2] * 5
    begin = [1, 0] * 5
    size = [2, 1] * 5
    for dtype in (np.int8, np.int64, np.float32):
        x = _values(rng, dtype, shape)
        index = tuple(slice(b, b + s) for b, s in zip(begin, size))
        out.append(Case("LargeGroups_Slice_%s_rank10" % _name(dtype),
                        "Slice", [x, np.array(begin, I64),
                                  np.array(size, I64)],
                        [x[index].copy()]))
    # With size-1 dims between, and an empty box.
    shape = [3, 1, 2] * 5
    begin = [0, 0, 1] * 5
    size = [2, 1, 1] * 5
    x = _values(rng, np.uint8, shape)
    index = tuple(slice(b, b + s) for b, s in zip(begin, size))
    out.append(Case("LargeGroups_Slice_uint8_rank15_ones", "Slice",
                    [x, np.array(begin, I32), np.array(size, I32)],
                    [x[index].copy()]))
    size_empty = list(size)
    size_empty[4] = 0
    index = tuple(slice(b, b + s) for b, s in zip(begin, size_empty))
    out.append(Case("LargeGroups_Slice_uint8_rank15_empty", "Slice",
                    [x, np.array(begin, I32), np.array(size_empty, I32)],
                    [x[index].copy()]))
    # StridedSlice with steps, negative ones included, on [3, 2] * 5.
    shape = [3, 2] * 5
    specs = [
        ("steps", [0, 1] * 5, [3, 2] * 5, [2, 1] * 5),
        ("negative", [2, 1] * 5, [-4, -3] * 5, [-2, -1] * 5),
        ("mixed", [2, 0, 0, 1] * 2 + [1, 0], [0, 1, 3, -3] * 2 + [3, 2],
         [-1, 1, 2, -1] * 2 + [1, 1]),
    ]
    for dtype in (np.int8, np.float64):
        x = _values(rng, dtype, shape)
        for name, b, e, s in specs:
            index = tuple(slice(bb, None if ee < -3 else ee, ss)
                          for bb, ee, ss in zip(b, e, s))
            # An end of -4 (below -dim) means "to the start" when walking
            # backwards, which NumPy spells None.
            out.append(Case("LargeGroups_StridedSlice_%s_%s" % (_name(dtype),
                                                                name),
                            "StridedSlice",
                            [x, np.array(b, I32), np.array(e, I32),
                             np.array(s, I32)], [x[index].copy()]))
    return out


def _broadcast(rng):
    out = []
    specs = [
        ("rank12", [2, 1] * 6, [1, 2] * 6),
        ("rank12_3", [3, 1, 2, 1] * 3, [1, 2, 1, 2] * 3),
        ("rank13_shorter", [2, 1] * 6 + [3], [1, 2] * 5 + [1, 3]),
        ("rank12_empty", [2, 1] * 5 + [0, 1], [1, 2] * 6),
    ]
    for name, a_shape, b_shape in specs:
        for op, fn, dtypes in (
                ("AddV2", np.add, (np.float32, np.int8, np.int64)),
                ("Maximum", np.maximum, (np.float64, np.uint8)),
                ("Less", np.less, (np.int32,))):
            for dtype in dtypes:
                a = _values(rng, dtype, a_shape)
                b = _values(rng, dtype, b_shape)
                expect = fn(a, b)
                if op != "Less":
                    expect = expect.astype(dtype)
                out.append(Case("LargeGroups_%s_%s_%s" % (op, _name(dtype),
                                                          name),
                                op, [a, b], [expect]))
    # Broadcast in place of an input of the output's shape (forwarded).
    a = _values(rng, np.float32, [2] * 12)
    b = _values(rng, np.float32, [1, 2] * 6)
    out.append(Case("LargeGroups_Mul_float32_rank12_same_shape", "Mul",
                    [a, b], [a * b]))
    # SelectV2: all three broadcast, each walking every third dim.
    for dtype in (np.int8, np.float64):
        cond = _values(rng, np.bool_, [2, 1, 1] * 4)
        t = _values(rng, dtype, [1, 2, 1] * 4)
        e = _values(rng, dtype, [1, 1, 2] * 4)
        out.append(Case("LargeGroups_SelectV2_%s_rank12" % _name(dtype),
                        "SelectV2", [cond, t, e], [np.where(cond, t, e)]))
    return out


def _broadcast_to(rng):
    out = []
    specs = [
        ("rank10", [2, 1] * 5, [2, 2] * 5, (np.float64, np.uint8)),
        # Eighteen copy dims: more than one copy takes.
        ("rank18", [2, 1] * 9, [2, 2] * 9, (np.int8,)),
        ("rank11_new_dim", [2, 1] * 5, [3] + [2, 2] * 5, (np.int32,)),
        ("rank12_ones", [3, 1, 1, 2] * 3, [3, 1, 2, 2] * 3, (np.float32,)),
        ("rank10_empty", [2, 1] * 4 + [1, 1], [2, 2] * 4 + [0, 2],
         (np.int8,)),
    ]
    for name, shape, target, dtypes in specs:
        for dtype in dtypes:
            x = _values(rng, dtype, shape)
            out.append(Case("LargeGroups_BroadcastTo_%s_%s" % (_name(dtype),
                                                               name),
                            "BroadcastTo", [x, np.array(target, I32)],
                            [np.broadcast_to(x, target).copy()]))
    return out


def _reductions(rng):
    out = []
    # [2, 3] * 5 reduced over every other dim: ten runs; with size-1
    # dims between; and an empty one.
    specs = [
        ("rank10_odd", [2, 3] * 5, list(range(1, 10, 2)), False),
        ("rank10_even_keep", [2, 3] * 5, list(range(0, 10, 2)), True),
        ("rank15_ones", [2, 1, 3] * 5, list(range(0, 15, 3)), False),
        ("rank10_negative", [2] * 10, [-1 - a for a in range(0, 10, 2)],
         False),
        ("rank12_empty", [2, 3] * 5 + [2, 0], list(range(1, 12, 2)), False),
    ]
    for name, shape, axes, keep in specs:
        axes_tuple = tuple(a % len(shape) for a in axes)
        attrs = {"keep_dims": ("bool", True)} if keep else {}
        for op, fn, dtype, tol in (
                ("Sum", np.sum, np.float32, 1e-5),
                ("Sum", np.sum, np.int64, 0.0),
                ("Mean", np.mean, np.float64, 1e-12),
                ("Max", np.max, np.int8, 0.0),
                ("Min", np.min, np.float32, 0.0),
                ("Prod", np.prod, np.float64, 1e-12),
                ("All", np.all, np.bool_, 0.0),
                ("Any", np.any, np.bool_, 0.0)):
            empty = 0 in shape
            if empty and op in ("Max", "Min", "Mean"):
                continue  # NumPy refuses (or warns on) empty ones
            if op == "Prod":
                # Near 1, so the products of up to 2^10 values stay finite.
                x = (1 + rng.integers(-8, 8, size=shape) / 64).astype(dtype)
            elif dtype == np.bool_ and op == "All":
                x = rng.random(shape) < 0.97
            elif dtype == np.bool_:
                x = rng.random(shape) < 0.03
            else:
                x = _values(rng, dtype, shape)
            expect = np.asarray(fn(x, axis=axes_tuple, keepdims=keep))
            if dtype != np.bool_:
                expect = expect.astype(dtype)
            out.append(Case("LargeGroups_%s_%s_%s" % (op, _name(dtype), name),
                            op, [x, np.array(axes, I32)], [expect], attrs,
                            rtol=tol))
    # ArgMax / ArgMin along one dim at rank 16 (never folded: one axis).
    for op, fn in (("ArgMax", np.argmax), ("ArgMin", np.argmin)):
        for dtype in (np.int8, np.float64):
            # Ties pick the first, in NumPy as in TensorFlow.
            x = _values(rng, dtype, [2, 1, 3, 1] * 3 + [2, 1, 2, 1])
            out.append(Case("LargeGroups_%s_%s_rank16" % (op, _name(dtype)),
                            op, [x, np.array(5, I32)],
                            [fn(x, axis=5).astype(I64)]))
    return out


def _where(rng):
    out = []
    for name, shape, dtype in (
            ("rank12", [2, 1, 3] * 4, np.bool_),
            ("rank20", [2, 1] * 10, np.float32),
            ("rank24", [2] * 12 + [1] * 12, np.int8),
            ("rank10_empty", [2] * 9 + [0], np.bool_)):
        if dtype == np.bool_:
            x = rng.random(shape) < 0.3
        else:
            x = _values(rng, dtype, shape)
            x[rng.random(shape) < 0.5] = 0
        out.append(Case("LargeGroups_Where_%s_%s" % (_name(dtype), name),
                        "Where", [x], [np.argwhere(x).astype(I64)]))
    return out


def cases():
    rng = np.random.default_rng(24)
    return (_tile(rng) + _reverse(rng) + _transpose(rng) + _slices(rng) +
            _broadcast(rng) + _broadcast_to(rng) + _reductions(rng) +
            _where(rng))
