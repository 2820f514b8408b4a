"""GatherNd, ScatterNd, TensorScatterUpdate and TopKV2: torch indexing
(index_put, topk) that torch differentiates."""

import numpy as np
import torch

from gradcase import F32, I32, I64


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


def cases(b):
    _nd(b)
    _top_k(b)
