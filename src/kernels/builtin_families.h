// The families of the built-in op library; builtin_ops.c registers them
// all. One registration function per family, one family per file (or
// a few files with one prefix).

#ifndef LOOM_KERNELS_BUILTIN_FAMILIES_H_
#define LOOM_KERNELS_BUILTIN_FAMILIES_H_

#include "loom/status.h"

// AddV2, Add, Sub, Mul, RealDiv, Div, FloorDiv, FloorMod, TruncateDiv,
// TruncateMod, Pow, Maximum, Minimum, SquaredDifference.
loom_status_t loom__register_binary_arithmetic(void);

// Equal, NotEqual, Less, LessEqual, Greater, GreaterEqual, LogicalAnd,
// LogicalOr.
loom_status_t loom__register_comparison_ops(void);

// Select, SelectV2, AddN, ClipByValue, BiasAdd, BiasAddGrad.
loom_status_t loom__register_select_ops(void);

// Element-wise unary math and activations, and their gradient helpers.
loom_status_t loom__register_unary_ops(void);

// Cast, IsNan, IsInf, IsFinite.
loom_status_t loom__register_cast_ops(void);

// Sum, Mean, Prod, Max, Min, All, Any, ArgMax, ArgMin.
loom_status_t loom__register_reduction_ops(void);

// MatMul, BatchMatMulV2, _FusedMatMul (OpenBLAS).
loom_status_t loom__register_linalg_ops(void);

// Einsum (einsum.c, its equation in einsum_equation.c).
loom_status_t loom__register_einsum_ops(void);

// Softmax, LogSoftmax, SoftmaxCrossEntropyWithLogits,
// SparseSoftmaxCrossEntropyWithLogits.
loom_status_t loom__register_softmax_ops(void);

// Shape and data movement ops (Identity ... Const).
loom_status_t loom__register_array_ops(void);

// Conv2D and its backprops, MaxPool, AvgPool and their grads,
// FusedBatchNormV3 and FusedBatchNormGradV3.
loom_status_t loom__register_nn_ops(void);

// RandomUniform, RandomStandardNormal, TruncatedNormal.
loom_status_t loom__register_random_ops(void);

// Variables: VarHandleOp, VarIsInitializedOp, AssignVariableOp,
// AssignAdd/SubVariableOp, ReadVariableOp, DestroyResourceOp.
loom_status_t loom__register_resource_ops(void);

// Fused optimizer updates: ResourceApplyGradientDescent,
// ResourceApplyMomentum, ResourceApplyKerasMomentum, ResourceApplyAdam.
loom_status_t loom__register_training_ops(void);

// CheckNumericsV2 (what the numerics handler runs after each op).
loom_status_t loom__register_check_numerics_ops(void);

// CopyOn, CopyOnGrad, CopyOff, CopyOffGrad: the front end's copies onto and
// off handlers as ops (the identity on the CPU).
loom_status_t loom__register_copy_ops(void);

// CollectiveReduceV2, CollectiveGatherV2, CollectiveBcastSendV2 and
// CollectiveBcastRecvV2 (src/collective runs them);
// ParallelPack and ParallelUnpack, the parallel handler's own ops (no CPU
// kernel).
loom_status_t loom__register_collective_ops(void);

loom_status_t loom__register_logging_ops(void);

loom_status_t loom__register_nn_activation_ops(void);

// Cumsum, Cumprod.
loom_status_t loom__register_scan_ops(void);

// GatherNd, ScatterNd, TensorScatterUpdate (nd_index.c and the files it
// names).
loom_status_t loom__register_nd_indexing_ops(void);

// TopKV2.
loom_status_t loom__register_top_k_ops(void);

// Unique.
loom_status_t loom__register_unique_ops(void);

// MatrixBandPart (matrix_band.c, registered by matrix_diag.c's
// loom__register_matrix_ops), MatrixDiagV3, MatrixDiagPartV3.
loom_status_t loom__register_matrix_ops(void);
loom_status_t loom__register_matrix_band_ops(void);

#endif  // LOOM_KERNELS_BUILTIN_FAMILIES_H_
