"""GatherNd, ScatterNd, TensorScatterUpdate, TopKV2 and the matrix band
and diagonal ops: torch indexing (index_put, topk) or gathers by flat
index (gradcase.index_map, with the kernel conformance references of the
diagonal ops applied to index arrays) that torch differentiates."""

import numpy as np
import torch

from gradcase import F32, I32, I64, a_str, gather_ref, index_map
import cases_matrix  # tests/kernels/conformance: the diagonal references


def _tuple(indices):
    depth = indices.shape[-1]
    return tuple(torch.tensor(indices[..., d].astype(np.int64))
                 for d in range(depth))


def _nd(b):
    params = b.normal(4, 3, 2)
    idx = np.array([[[1, 0], [3, 2]], [[1, 0], [0, 1]]], I32)
    b.add("GatherNd_slices_repeated", "GatherNd", [params, idx],
          lambda p, i: p[_tuple(idx)], watch=[0], hvp=True)
    idx = np.array([[0, 2, 1], [3, 1, 0]], I64)
    b.add("GatherNd_elements", "GatherNd", [params, idx],
          lambda p, i: p[_tuple(idx)], watch=[0])
    b.add("GatherNd_float32", "GatherNd",
          [b.normal(3, 4, dtype=F32), np.array([[2], [0]], I32)],
          lambda p, i: p[torch.tensor([2, 0])], watch=[0])
    idx = np.array([[1, 0], [3, 2], [1, 0]], I32)
    updates = b.normal(3, 2)
    b.add("ScatterNd_repeated", "ScatterNd",
          [idx, updates, np.array([4, 3, 2], I32)],
          lambda i, u, s: torch.zeros(4, 3, 2, dtype=u.dtype).index_put(
              _tuple(idx), u, accumulate=True), watch=[1], hvp=True)
    tensor = b.normal(4, 3)
    idx = np.array([[2], [0]], I64)
    updates = b.normal(2, 3)
    b.add("TensorScatterUpdate", "TensorScatterUpdate",
          [tensor, idx, updates],
          lambda t, i, u: t.index_put(_tuple(idx), u), watch=[0, 2])


def _top_k(b):
    x = b.distinct(3, 5)
    b.add("TopKV2", "TopKV2", [x, np.array(2, I32)],
          lambda t, k: (torch.topk(t, 2).values, None), watch=[0], hvp=True)
    x = b.distinct(2, 2, 4)
    b.add("TopKV2_rank3_int64_indices", "TopKV2", [x, np.array(4, I64)],
          lambda t, k: (torch.topk(t, 4).values, None), watch=[0],
          attrs={"index_type": ("type", "int64")})


def _band(b):
    x = b.normal(2, 3, 4)
    for lower, upper in ((1, 0), (-1, 1), (0, -1)):
        rows = np.arange(3)[:, None]
        cols = np.arange(4)[None, :]
        keep = (((lower < 0) | (rows - cols <= lower)) &
                ((upper < 0) | (cols - rows <= upper)))
        mask = torch.tensor(keep.astype(np.float64))
        b.add(("MatrixBandPart_%d_%d" % (lower, upper)).replace("-", "m"),
              "MatrixBandPart", [x, np.array(lower, I64),
                                 np.array(upper, I64)],
              lambda t, lo, up, mask=mask: t * mask, watch=[0])


def _diag(b):
    x = b.normal(2, 3, 4)
    for k, align in (((-1, 2), "RIGHT_LEFT"), ((0, 1), "LEFT_RIGHT"),
                     (1, "RIGHT_RIGHT")):
        kk = np.array(k, I32)
        picks = index_map(x.shape, lambda a: cases_matrix._diag_part(
            a, k, -1, align))
        name = str(k).replace(", ", "_").strip("()").replace("-", "m")
        b.add("MatrixDiagPartV3_%s_%s" % (name, align), "MatrixDiagPartV3",
              [x, kk, np.array(0.5)],
              lambda t, k_, p, picks=picks: gather_ref(t, picks) +
              p * torch.tensor((picks < 0).astype(np.float64)),
              watch=[0], attrs={"align": a_str(align)})
        diagonal = cases_matrix._diag_part(x, k, 0.0, align)
        rows, cols = x.shape[-2:]
        picks = index_map(diagonal.shape, lambda a: cases_matrix._diag(
            a, k, rows, cols, -1, align))
        b.add("MatrixDiagV3_%s_%s" % (name, align), "MatrixDiagV3",
              [diagonal, kk, np.array(rows, I32), np.array(cols, I32),
               np.array(0.5)],
              lambda d, k_, r, c, p, picks=picks: gather_ref(d, picks) +
              p * torch.tensor((picks < 0).astype(np.float64)),
              watch=[0], attrs={"align": a_str(align)})


def cases(b):
    _nd(b)
    _top_k(b)
    _band(b)
    _diag(b)
