"""Shape and data-movement ops: their gradients route the upstream gradient
back to the elements each output element came from. The references are
gathers by flat index (gradcase.index_map) that torch differentiates, so
TensorFlow's slicing rules are stated once, with NumPy indexing."""

import numpy as np
import torch

from gradcase import F32, I32, I64, a_int, a_ints, gather_ref, index_map


def _moved(b, name, op, x, extra, fn, attrs=None, hvp=False, outputs=1,
           outgrads=None, **kwargs):
    """An op whose outputs are fn(index array) picks of x (x is input 0;
    `extra` are the other inputs)."""
    maps = fn(np.arange(x.size, dtype=np.int64).reshape(x.shape))
    if outputs == 1:
        maps = [maps]

    def ref(t, *rest):
        outs = tuple(gather_ref(t, m) for m in maps)
        return outs if outputs > 1 else outs[0]

    b.add(name, op, [x] + list(extra), ref, watch=[0], attrs=attrs,
          outgrads=outgrads, hvp=hvp, **kwargs)


def _shape_ops(b):
    x = b.normal(2, 3, 4)
    b.add("Reshape", "Reshape", [x, np.array([4, -1], I32)],
          lambda t, s: t.reshape(4, 6))
    b.add("Reshape_int64_scalar", "Reshape", [b.normal(1, 1),
                                              np.zeros([0], I64)],
          lambda t, s: t.reshape(()))
    b.add("ExpandDims_1", "ExpandDims", [b.normal(2, 3), np.array(1, I32)],
          lambda t, d: t.unsqueeze(1))
    b.add("ExpandDims_neg", "ExpandDims", [b.normal(2, 3), np.array([-1], I64)],
          lambda t, d: t.unsqueeze(-1))
    b.add("Squeeze_all", "Squeeze", [b.normal(1, 3, 1)],
          lambda t: t.reshape(3))
    b.add("Squeeze_dims", "Squeeze", [b.normal(1, 3, 1)],
          lambda t: t.reshape(1, 3), attrs={"squeeze_dims": a_ints([2])})
    for perm in ([1, 0, 2], [2, 0, 1]):
        p = np.array(perm, I32)
        _moved(b, "Transpose_%s" % "".join(map(str, perm)), "Transpose",
               b.normal(2, 3, 4), [p], lambda a, p=p: a.transpose(p),
               hvp=perm == [2, 0, 1])
    _moved(b, "Transpose_int64_perm", "Transpose", b.normal(3, 2),
           [np.array([1, 0], I64)], lambda a: a.T)
    x = b.normal(2, 3)
    b.add("IdentityN", "IdentityN", [x, b.normal(4)],
          lambda a, c: (a * 1, c * 1))
    # Input 0 reaches only output 0, which has no upstream gradient: it is
    # unconnected (NULL).
    b.add("IdentityN_one_upstream", "IdentityN", [x, b.normal(4)],
          lambda a, c: (a * 1, c * 1), outgrads=[None, "random"], none=(0,))
    for axes in ([1], [0, 2], [-1]):
        _moved(b, "ReverseV2_%s" % "_".join(str(a) for a in axes),
               "ReverseV2", b.normal(2, 3, 4), [np.array(axes, I32)],
               lambda a, axes=axes: np.flip(a, axes), hvp=axes == [1])
    # StopGradient passes values and no gradient (TensorFlow's
    # NotDifferentiable): its input is unconnected.
    b.add("StopGradient", "StopGradient", [b.normal(2, 3)],
          lambda t: t.detach() + 0 * t, none=(0,), fd=False)


def _concat_pack(b):
    xs = [b.normal(2, 3), b.normal(2, 1), b.normal(2, 2)]
    b.add("ConcatV2_axis1", "ConcatV2", xs + [np.array(1, I32)],
          lambda *t: torch.cat(t[:3], 1), hvp=True)
    ys = [b.normal(1, 3), b.normal(2, 3)]
    b.add("ConcatV2_axis0_int64", "ConcatV2", ys + [np.array(0, I64)],
          lambda *t: torch.cat(t[:2], 0))
    zs = [b.normal(2, 2, 1), b.normal(2, 2, 3)]
    b.add("ConcatV2_negative_axis", "ConcatV2", zs + [np.array(-1, I32)],
          lambda *t: torch.cat(t[:2], -1))
    zs = [b.normal(2, 0), b.normal(2, 3)]
    b.add("ConcatV2_with_empty", "ConcatV2", zs + [np.array(1, I32)],
          lambda *t: torch.cat(t[:2], 1))
    # Concat (v1) takes its axis first.
    xs = [b.normal(2, 3), b.normal(1, 3), b.normal(3, 3)]
    b.add("Concat_axis0", "Concat", [np.array(0, I32)] + xs,
          lambda d, *t: torch.cat(t, 0), hvp=True)
    zs = [b.normal(2, 2, 1), b.normal(2, 2, 3)]
    b.add("Concat_negative_axis", "Concat", [np.array(-1, I32)] + zs,
          lambda d, *t: torch.cat(t, -1))
    for axis in (0, 1, -1):
        xs = [b.normal(2, 3) for _ in range(3)]
        b.add("Pack_axis%d" % axis, "Pack", xs,
              lambda *t, axis=axis: torch.stack(t, axis),
              attrs={"axis": a_int(axis)})
    for axis in (0, 1):
        x = b.normal(3, 2, 2)
        num = x.shape[axis]
        _moved(b, "Unpack_axis%d" % axis, "Unpack", x, [],
               lambda a, axis=axis, num=num: [np.take(a, i, axis)
                                              for i in range(num)],
               attrs={"num": a_int(num), "axis": a_int(axis)}, outputs=num)
    x = b.normal(3, 2)
    _moved(b, "Unpack_some_upstream", "Unpack", x, [],
           lambda a: [a[i] for i in range(3)],
           attrs={"num": a_int(3)}, outputs=3,
           outgrads=["random", None, "random"])


def _split(b):
    # Split's inputs are (split_dim, value): the value is input 1.
    maps1 = np.split(np.arange(12, dtype=np.int64).reshape(2, 6), 3, 1)
    b.add("Split_axis1", "Split", [np.array(1, I32), b.normal(2, 6)],
          lambda d, t: tuple(gather_ref(t, m) for m in maps1), watch=[1],
          attrs={"num_split": a_int(3)})
    x = b.normal(4, 3)
    maps = np.split(np.arange(12, dtype=np.int64).reshape(4, 3), 2, 0)
    b.add("Split_axis0", "Split", [np.array(0, I32), x],
          lambda d, t: tuple(gather_ref(t, m) for m in maps), watch=[1],
          attrs={"num_split": a_int(2)})
    b.add("Split_some_upstream", "Split", [np.array(-1, I32), b.normal(2, 4)],
          lambda d, t: tuple(gather_ref(t, m) for m in np.split(
              np.arange(8, dtype=np.int64).reshape(2, 4), 2, 1)),
          watch=[1], attrs={"num_split": a_int(2)},
          outgrads=[None, "random"])
    x = b.normal(2, 6)
    _moved(b, "SplitV_sizes", "SplitV", x,
           [np.array([1, -1, 2], I32), np.array(1, I32)],
           lambda a: np.split(a, [1, 4], 1), attrs={"num_split": a_int(3)},
           outputs=3)
    x = b.normal(5, 2)
    _moved(b, "SplitV_int64_axis0", "SplitV", x,
           [np.array([2, 3], I64), np.array(0, I32)],
           lambda a: np.split(a, [2], 0), attrs={"num_split": a_int(2)},
           outputs=2, outgrads=["random", None])


def _slices(b):
    x = b.normal(4, 5)
    _moved(b, "Slice_basic", "Slice", x,
           [np.array([1, 2], I32), np.array([2, 3], I32)],
           lambda a: a[1:3, 2:5], hvp=True)
    _moved(b, "Slice_minus_one_int64", "Slice", b.normal(3, 4, 2),
           [np.array([1, 0, 1], I64), np.array([-1, 2, -1], I64)],
           lambda a: a[1:, 0:2, 1:])
    E, N = Ellipsis, None
    specs = [
        # name, NumPy index, begin, end, strides, masks
        ("basic", (slice(1, 4), slice(0, 5, 2)), [1, 0], [4, 5], [1, 2], {}),
        ("negative_stride", (slice(4, 0, -1),), [4], [0], [-1], {}),
        ("reverse_masks", (slice(None, None, -1), slice(None, None, -2)),
         [0, 0], [0, 0], [-1, -2], {"begin_mask": 3, "end_mask": 3}),
        ("negative_indices", (slice(-4, -1), slice(-2, None)), [-4, -2],
         [-1, 0], [1, 1], {"end_mask": 2}),
        ("shrink", (2, slice(1, 3)), [2, 1], [3, 3], [1, 1],
         {"shrink_axis_mask": 1}),
        ("new_axis", (slice(None), N, slice(1, 3)), [0, 0, 1], [0, 0, 3],
         [1, 1, 1], {"begin_mask": 1, "end_mask": 1, "new_axis_mask": 2}),
        ("ellipsis", (E, slice(0, 2)), [0, 0], [0, 2], [1, 1],
         {"ellipsis_mask": 1}),
        ("clamped", (slice(-100, 100),), [-100], [100], [1], {}),
    ]
    x = b.normal(5, 6, 3)
    for name, index, begin, end, strides, masks in specs:
        attrs = {k: a_int(v) for k, v in masks.items()}
        _moved(b, "StridedSlice_%s" % name, "StridedSlice", x,
               [np.array(begin, I32), np.array(end, I32),
                np.array(strides, I32)],
               lambda a, index=index: a[index], attrs=attrs)
    _moved(b, "StridedSlice_int64", "StridedSlice", b.normal(4, 5),
           [np.array([3, 1], I64), np.array([0, 5], I64),
            np.array([-2, 2], I64)], lambda a: a[3:0:-2, 1:5:2])


def _tile_pad_broadcast(b):
    for tag, shape, multiples in (("rows", (2, 3), [2, 1]),
                                  ("both", (2, 1, 3), [1, 3, 2])):
        _moved(b, "Tile_%s" % tag, "Tile", b.normal(*shape),
               [np.array(multiples, I32)],
               lambda a, m=multiples: np.tile(a, m), hvp=tag == "rows")
    _moved(b, "Tile_int64", "Tile", b.normal(3), [np.array([2], I64)],
           lambda a: np.tile(a, 2))
    pads = np.array([[1, 0], [2, 1]], I32)
    _moved(b, "Pad", "Pad", b.normal(2, 3), [pads],
           lambda a: np.pad(a, pads, constant_values=-1))
    _moved(b, "Pad_int64", "Pad", b.normal(2, 2, 1),
           [np.array([[0, 1], [1, 1], [0, 0]], I64)],
           lambda a: np.pad(a, [[0, 1], [1, 1], [0, 0]], constant_values=-1))
    x = b.normal(2, 3)
    idx = index_map(x.shape, lambda a: np.pad(a, pads, constant_values=-1))
    value = np.array(0.75)

    def pad_v2(t, p, c):
        picked = gather_ref(t, idx)
        return torch.where(torch.tensor(idx.copy()) >= 0, picked, c)
    # TensorFlow gives no gradient to constant_values.
    b.add("PadV2", "PadV2", [x, pads, value], pad_v2, watch=[0, 2], none=(2,))
    for tag, shape, target in (("rank_up", (3,), [2, 3]),
                               ("ones", (2, 1), [2, 2, 3]),
                               ("same", (2, 3), [2, 3])):
        _moved(b, "BroadcastTo_%s" % tag, "BroadcastTo", b.normal(*shape),
               [np.array(target, I32)],
               lambda a, t=target: np.broadcast_to(a, t))
    # Fill: the value's gradient sums the upstream gradient.
    b.add("Fill", "Fill", [np.array([2, 3], I32), np.array(1.5)],
          lambda d, v: v.expand(2, 3) * 1)
    b.add("Fill_int64_dims", "Fill", [np.array([4], I64), np.array(-0.5)],
          lambda d, v: v.expand(4) * 1)


def _gather(b):
    params = b.normal(5, 3)
    idx = np.array([3, 0, 3, 1], I32)
    _moved(b, "Gather_repeated", "Gather", params, [idx],
           lambda a: a[idx])
    idx2 = np.array([[1, 4], [0, 1]], I64)
    _moved(b, "GatherV2_axis0_2d_indices", "GatherV2", params,
           [idx2, np.array(0, I32)], lambda a: a[idx2])
    p3 = b.normal(2, 4, 3)
    idx3 = np.array([2, 2, 0], I32)
    _moved(b, "GatherV2_axis1", "GatherV2", p3, [idx3, np.array(1, I32)],
           lambda a: a[:, idx3], hvp=True)
    _moved(b, "GatherV2_axis_last_negative", "GatherV2", p3,
           [np.array([1, 0], I64), np.array(-1, I64)],
           lambda a: a[:, :, [1, 0]])
    _moved(b, "GatherV2_scalar_index", "GatherV2", p3,
           [np.array(3, I32), np.array(1, I32)], lambda a: a[:, 3])
    idxb = np.array([[3, 0, 3], [1, 1, 2]], I32)
    _moved(b, "GatherV2_batch_dims1", "GatherV2", p3,
           [idxb, np.array(1, I32)],
           lambda a: np.stack([a[i][idxb[i]] for i in range(2)]),
           attrs={"batch_dims": a_int(1)})
    p4 = b.normal(2, 3, 4)
    idxc = np.array([[1, 0], [2, 2]], I32)
    _moved(b, "GatherV2_batch_dims1_axis2", "GatherV2", p4,
           [idxc, np.array(2, I32)],
           lambda a: np.stack([a[i][:, idxc[i]] for i in range(2)]),
           attrs={"batch_dims": a_int(1)})


def cases(b):
    _shape_ops(b)
    _concat_pack(b)
    _split(b)
    _slices(b)
    _tile_pad_broadcast(b)
    _gather(b)
    b.add("Reshape_float32", "Reshape",
          [b.normal(2, 3, dtype=F32), np.array([6], I32)],
          lambda t, s: t.reshape(6))
