"""Ops called with every attribute TensorFlow's registration declares, set
explicitly as TensorFlow's eager runtime and graphs pass them (type attrs
included), with NumPy's values: TopKV2, TensorScatterUpdate, ScatterNd,
GatherNd, MatrixBandPart, MatrixDiagV3, MatrixDiagPartV3, Softsign,
SoftsignGrad, Unique, Cumprod and Einsum. An attr Loom's op definition
lacked, or a default it did not have, would fail these."""

import numpy as np

from casegen import Case

F32 = np.float32
I32 = np.int32
I64 = np.int64


def _t(name):
    return ("type", name)


def cases():
    rng = np.random.default_rng(20261128)
    out = []
    x = np.array([[3.0, 1.0, 4.0, 1.5], [9.0, 2.0, 6.0, 5.0]], F32)
    order = np.argsort(-x, axis=-1, kind="stable")[:, :2]
    out.append(Case(
        "TfAttrs_TopKV2", "TopKV2", [x, np.array(2, I64)],
        [np.take_along_axis(x, order, -1), order.astype(I64)],
        {"sorted": ("bool", True), "T": _t("float"), "Tk": _t("int64"),
         "index_type": _t("int64")}))

    tensor = rng.standard_normal((4, 3)).astype(F32)
    indices = np.array([[2], [0]], I32)
    updates = rng.standard_normal((2, 3)).astype(F32)
    expect = tensor.copy()
    expect[[2, 0]] = updates
    out.append(Case(
        "TfAttrs_TensorScatterUpdate", "TensorScatterUpdate",
        [tensor, indices, updates], [expect],
        {"T": _t("float"), "Tindices": _t("int32"),
         "bad_indices_policy": ("string", "")}))

    scattered = np.zeros((4, 3), F32)
    np.add.at(scattered, [2, 0], updates)
    out.append(Case(
        "TfAttrs_ScatterNd", "ScatterNd",
        [indices, updates, np.array([4, 3], I32)], [scattered],
        {"T": _t("float"), "Tindices": _t("int32"),
         "bad_indices_policy": ("string", "")}))

    out.append(Case(
        "TfAttrs_GatherNd", "GatherNd", [tensor, indices.astype(I64)],
        [tensor[[2, 0]]],
        {"Tparams": _t("float"), "Tindices": _t("int64"),
         "bad_indices_policy": ("string", "")}))

    m = rng.standard_normal((3, 4)).astype(F32)
    rows, cols = np.arange(3)[:, None], np.arange(4)[None, :]
    band = np.where((rows - cols <= 1) & (cols - rows <= 0), m, 0).astype(F32)
    out.append(Case(
        "TfAttrs_MatrixBandPart", "MatrixBandPart",
        [m, np.array(1, I64), np.array(0, I64)], [band],
        {"T": _t("float"), "Tindex": _t("int64")}))

    diagonal = np.array([1.0, 2.0, 3.0], F32)
    out.append(Case(
        "TfAttrs_MatrixDiagV3", "MatrixDiagV3",
        [diagonal, np.array(0, I32), np.array(-1, I32), np.array(-1, I32),
         np.array(0, F32)], [np.diag(diagonal)],
        {"T": _t("float"), "align": ("string", "RIGHT_LEFT")}))
    out.append(Case(
        "TfAttrs_MatrixDiagPartV3", "MatrixDiagPartV3",
        [m, np.array(0, I32), np.array(0, F32)], [np.diagonal(m).copy()],
        {"T": _t("float"), "align": ("string", "RIGHT_LEFT")}))

    f = rng.uniform(-5, 5, (6,)).astype(F32)
    g = rng.uniform(-2, 2, (6,)).astype(F32)
    out.append(Case(
        "TfAttrs_Softsign", "Softsign", [f],
        [(f / (1 + np.abs(f))).astype(F32)], {"T": _t("float")},
        rtol=1e-6, atol=1e-7))
    out.append(Case(
        "TfAttrs_SoftsignGrad", "SoftsignGrad", [g, f],
        [(g / (1 + np.abs(f)) ** 2).astype(F32)], {"T": _t("float")},
        rtol=1e-6, atol=1e-7))

    values = np.array([4, 5, 4, 1, 5], I32)
    out.append(Case(
        "TfAttrs_Unique", "Unique", [values],
        [np.array([4, 5, 1], I32), np.array([0, 1, 0, 2, 1], I64)],
        {"T": _t("int32"), "out_idx": _t("int64")}))

    c = np.array([[1.0, 2.0, 3.0], [0.5, 2.0, -1.0]], F32)
    out.append(Case(
        "TfAttrs_Cumprod", "Cumprod", [c, np.array(1, I64)],
        [np.cumprod(c, axis=1).astype(F32)],
        {"exclusive": ("bool", False), "reverse": ("bool", False),
         "T": _t("float"), "Tidx": _t("int64")}))

    a = rng.standard_normal((2, 3)).astype(F32)
    b = rng.standard_normal((3, 4)).astype(F32)
    out.append(Case(
        "TfAttrs_Einsum", "Einsum", [a, b],
        [np.einsum("ij,jk->ik", a.astype(np.float64),
                   b.astype(np.float64)).astype(F32)],
        {"equation": ("string", "ij,jk->ik"), "N": ("int", 2),
         "T": _t("float")}, rtol=1e-5, atol=1e-6))
    return out
