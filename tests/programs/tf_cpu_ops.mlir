// TensorFlow ops as TFRT's CPU backend programs run them through
// corert.executeop "tf.X": BiasAdd (NHWC and NCHW), Softmax, Mean, Pad,
// Tile, ConcatV2, Less, Shape, ZerosLike, ExpandDims, RealDiv, MaxPool,
// Conv2D, FusedBatchNormV3 and _FusedMatMul, with their errors. Loom's ops
// follow TensorFlow: FusedBatchNormV3 takes 1-D scale, offset, mean and
// variance (TFRT's CPU kernel also takes [1, 1, 1, C]; TensorFlow's kernel
// and shape function refuse them). Expected values from NumPy and PyTorch.
// RUN: not loom run %s 2>&1 | FileCheck %s
// RUN: loom run --verify-diagnostics %s

// CHECK-LABEL: --- Running 'elementwise_and_reductions'
func.func @elementwise_and_reductions() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %x = corert.executeop(%cpu) "tf.Const"()
      {dtype = f32, value = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>} : 1
  %b = corert.executeop(%cpu) "tf.Const"()
      {dtype = f32, value = dense<[0.5, -1.0, 2.0]> : tensor<3xf32>} : 1
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [2, 3], values = [1.500000e+00, 1.000000e+00, 5.000000e+00, 4.500000e+00, 4.000000e+00, 8.000000e+00]
  %ba = corert.executeop(%cpu) "tf.BiasAdd"(%x, %b) {T = f32, data_format = "NHWC"} : 1
  %ch1 = corert.print_tensorhandle(%ba, %ch0)
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [2, 3], values = [9.003057e-02, 2.447285e-01, 6.652409e-01, 9.003057e-02, 2.447285e-01, 6.652409e-01]
  %sm = corert.executeop(%cpu) "tf.Softmax"(%x) {T = f32} : 1
  %ch2 = corert.print_tensorhandle(%sm, %ch1)
  %axis = corert.executeop(%cpu) "tf.Const"() {dtype = i32, value = dense<[1]> : tensor<1xi32>} : 1
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [2], values = [2.000000e+00, 5.000000e+00]
  %mean = corert.executeop(%cpu) "tf.Mean"(%x, %axis) {T = f32, Tidx = i32, keep_dims = false} : 1
  %ch3 = corert.print_tensorhandle(%mean, %ch2)
  // CHECK-NEXT: DenseHostTensor dtype = i1, shape = [2, 3], values = [1, 0, 1, 1, 0, 1]
  %less = corert.executeop(%cpu) "tf.Less"(%x, %ba) {T = f32} : 1
  %ch4 = corert.print_tensorhandle(%less, %ch3)
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [2, 3], values = [2.000000e+00, -2.000000e+00, 1.500000e+00, 8.000000e+00, -5.000000e+00, 3.000000e+00]
  %rd = corert.executeop(%cpu) "tf.RealDiv"(%x, %b) {T = f32} : 1
  %ch5 = corert.print_tensorhandle(%rd, %ch4)
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [2, 3], values = [0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]
  %zl = corert.executeop(%cpu) "tf.ZerosLike"(%x) {T = f32} : 1
  %ch6 = corert.print_tensorhandle(%zl, %ch5)
  tfrt.return %ch6 : !tfrt.chain
}
// CHECK-NEXT: 'elementwise_and_reductions' returned !tfrt.chain value

// CHECK-LABEL: --- Running 'shapes'
func.func @shapes() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %x = corert.executeop(%cpu) "tf.Const"()
      {dtype = f32, value = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>} : 1
  %pads = corert.executeop(%cpu) "tf.Const"()
      {dtype = i32, value = dense<[[1, 0], [0, 2]]> : tensor<2x2xi32>} : 1
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [3, 5], values = [0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00, 0.000000e+00, 0.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00, 0.000000e+00, 0.000000e+00]
  %pad = corert.executeop(%cpu) "tf.Pad"(%x, %pads) {T = f32, Tpaddings = i32} : 1
  %ch1 = corert.print_tensorhandle(%pad, %ch0)
  %m = corert.executeop(%cpu) "tf.Const"() {dtype = i32, value = dense<[2, 1]> : tensor<2xi32>} : 1
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [4, 3], values = [1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00]
  %tile = corert.executeop(%cpu) "tf.Tile"(%x, %m) {T = f32, Tmultiples = i32} : 1
  %ch2 = corert.print_tensorhandle(%tile, %ch1)
  %zero = corert.executeop(%cpu) "tf.Const"() {dtype = i32, value = dense<0> : tensor<i32>} : 1
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [2, 6], values = [1.000000e+00, 2.000000e+00, 3.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00]
  %one = corert.executeop(%cpu) "tf.Const"() {dtype = i32, value = dense<1> : tensor<i32>} : 1
  %cat = corert.executeop(%cpu) "tf.ConcatV2"(%x, %x, %one) {N = 2 : i64, T = f32, Tidx = i32} : 1
  %ch3 = corert.print_tensorhandle(%cat, %ch2)
  // CHECK-NEXT: DenseHostTensor dtype = i32, shape = [2], values = [2, 3]
  %shape = corert.executeop(%cpu) "tf.Shape"(%x) {T = f32, out_type = i32} : 1
  %ch4 = corert.print_tensorhandle(%shape, %ch3)
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [1, 2, 3], values = [1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00]
  %ed = corert.executeop(%cpu) "tf.ExpandDims"(%x, %zero) {T = f32, Tdim = i32} : 1
  %ch5 = corert.print_tensorhandle(%ed, %ch4)
  tfrt.return %ch5 : !tfrt.chain
}
// CHECK-NEXT: 'shapes' returned !tfrt.chain value

// CHECK-LABEL: --- Running 'images'
func.func @images() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %img = corert.executeop(%cpu) "tf.Const"()
      {dtype = f32, value = dense<[[[[1.0], [2.0], [3.0]], [[4.0], [5.0], [6.0]], [[7.0], [8.0], [9.0]]]]> : tensor<1x3x3x1xf32>} : 1
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [1, 2, 2, 1], values = [5.000000e+00, 6.000000e+00, 8.000000e+00, 9.000000e+00]
  %mp = corert.executeop(%cpu) "tf.MaxPool"(%img)
      {T = f32, data_format = "NHWC", ksize = [1, 2, 2, 1], padding = "VALID", strides = [1, 1, 1, 1]} : 1
  %ch1 = corert.print_tensorhandle(%mp, %ch0)
  %k = corert.executeop(%cpu) "tf.Const"()
      {dtype = f32, value = dense<[[[[1.0]], [[0.0]]], [[[0.0]], [[-1.0]]]]> : tensor<2x2x1x1xf32>} : 1
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [1, 2, 2, 1], values = [-4.000000e+00, -4.000000e+00, -4.000000e+00, -4.000000e+00]
  %cv = corert.executeop(%cpu) "tf.Conv2D"(%img, %k)
      {T = f32, data_format = "NHWC", padding = "VALID", strides = [1, 1, 1, 1], dilations = [1, 1, 1, 1]} : 1
  %ch2 = corert.print_tensorhandle(%cv, %ch1)
  %scale = corert.executeop(%cpu) "tf.Const"() {dtype = f32, value = dense<[2.0]> : tensor<1xf32>} : 1
  %offset = corert.executeop(%cpu) "tf.Const"() {dtype = f32, value = dense<[1.0]> : tensor<1xf32>} : 1
  %mean = corert.executeop(%cpu) "tf.Const"() {dtype = f32, value = dense<[5.0]> : tensor<1xf32>} : 1
  %var = corert.executeop(%cpu) "tf.Const"() {dtype = f32, value = dense<[4.0]> : tensor<1xf32>} : 1
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [1, 3, 3, 1], values = [-3.000000e+00, -2.000000e+00, -1.000000e+00, 0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00]
  %bn:6 = corert.executeop(%cpu) "tf.FusedBatchNormV3"(%img, %scale, %offset, %mean, %var)
      {T = f32, U = f32, epsilon = 0.0 : f32, data_format = "NHWC", is_training = false} : 6
  %ch3 = corert.print_tensorhandle(%bn#0, %ch2)
  // An NCHW bias adds along dimension 1.
  %x4 = corert.executeop(%cpu) "tf.Const"() {dtype = f32, value = dense<1.0> : tensor<1x2x2x2xf32>} : 1
  %b2 = corert.executeop(%cpu) "tf.Const"() {dtype = f32, value = dense<[0.5, -1.0]> : tensor<2xf32>} : 1
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [1, 2, 2, 2], values = [1.500000e+00, 1.500000e+00, 1.500000e+00, 1.500000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]
  %nchw = corert.executeop(%cpu) "tf.BiasAdd"(%x4, %b2) {T = f32, data_format = "NCHW"} : 1
  %ch4 = corert.print_tensorhandle(%nchw, %ch3)
  tfrt.return %ch4 : !tfrt.chain
}
// CHECK-NEXT: 'images' returned !tfrt.chain value

// CHECK-LABEL: --- Running 'errors'
func.func @errors() -> (!corert.tensorhandle, !corert.tensorhandle, !corert.tensorhandle, !corert.tensorhandle) {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %x = corert.executeop(%cpu) "tf.Const"()
      {dtype = f32, value = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>} : 1
  %b2 = corert.executeop(%cpu) "tf.Const"() {dtype = f32, value = dense<[0.5, -1.0]> : tensor<2xf32>} : 1
  // CHECK-NEXT: tf_cpu_ops.mlir:[[@LINE+2]]:8: error: runtime error: Op 'BiasAdd': value for attr 'data_format' of "NDHWC" is not in the list of allowed values
  // expected-error @+1 {{Op 'BiasAdd': value for attr 'data_format' of "NDHWC" is not in the list of allowed values}}
  %a = corert.executeop(%cpu) "tf.BiasAdd"(%x, %b2) {T = f32, data_format = "NDHWC"} : 1
  // CHECK-NEXT: tf_cpu_ops.mlir:[[@LINE+2]]:8: error: runtime error: Op 'BiasAdd': Must provide as many biases as the last dimension of the input tensor: [2] vs. [2,3]
  // expected-error @+1 {{Op 'BiasAdd': Must provide as many biases as the last dimension of the input tensor: [2] vs. [2,3]}}
  %b = corert.executeop(%cpu) "tf.BiasAdd"(%x, %b2) {T = f32, data_format = "NHWC"} : 1
  // CHECK-NEXT: tf_cpu_ops.mlir:[[@LINE+2]]:8: error: runtime error: Op 'BiasAdd': Input tensor must be at least 2D: [2]
  // expected-error @+1 {{Op 'BiasAdd': Input tensor must be at least 2D: [2]}}
  %c = corert.executeop(%cpu) "tf.BiasAdd"(%b2, %b2) {T = f32} : 1
  %img = corert.executeop(%cpu) "tf.Const"() {dtype = f32, value = dense<1.0> : tensor<1x2x2x1xf32>} : 1
  %one = corert.executeop(%cpu) "tf.Const"() {dtype = f32, value = dense<1.0> : tensor<1x1x1x1xf32>} : 1
  // CHECK-NEXT: tf_cpu_ops.mlir:[[@LINE+2]]:10: error: runtime error: Op 'FusedBatchNormV3': scale must be 1-dimensional, got shape [1,1,1,1]
  // expected-error @+1 {{Op 'FusedBatchNormV3': scale must be 1-dimensional, got shape [1,1,1,1]}}
  %d:6 = corert.executeop(%cpu) "tf.FusedBatchNormV3"(%img, %one, %one, %one, %one)
      {T = f32, U = f32, epsilon = 0.0 : f32, data_format = "NHWC", is_training = false} : 6
  tfrt.return %a, %b, %c, %d#0 : !corert.tensorhandle, !corert.tensorhandle, !corert.tensorhandle, !corert.tensorhandle
}
// CHECK-NEXT: 'errors' returned <<error: Op 'BiasAdd': value for attr 'data_format'{{.*}}>>,<<error: Op 'BiasAdd': Must provide{{.*}}>>,<<error: Op 'BiasAdd': Input tensor must be at least 2D: [2]>>,<<error: Op 'FusedBatchNormV3': scale must be 1-dimensional, got shape [1,1,1,1]>>

// _FusedMatMul as grappler and TFRT's CPU programs write it: fused_ops only
// (T and num_args come from the operands).
// CHECK-LABEL: --- Running 'fused_matmul'
func.func @fused_matmul() -> !corert.tensorhandle {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %a = corert.executeop(%cpu) "tf.Const"()
      {dtype = f32, value = dense<[[-1.0, -0.5, 0.0], [0.5, 1.0, 1.5]]> : tensor<2x3xf32>} : 1
  %b = corert.executeop(%cpu) "tf.Const"()
      {dtype = f32, value = dense<[[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]> : tensor<3x2xf32>} : 1
  %bias = corert.executeop(%cpu) "tf.Const"() {dtype = f32, value = dense<[1.0, -20.0]> : tensor<2xf32>} : 1
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [2, 2], values = [0.000000e+00, -2.250000e+01, 9.000000e+00, -9.000000e+00]
  %f0 = corert.executeop(%cpu) "tf._FusedMatMul"(%a, %b, %bias)
      {fused_ops = ["BiasAdd"], transpose_a = false, transpose_b = false} : 1
  %ch1 = corert.print_tensorhandle(%f0, %ch0)
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [2, 2], values = [0.000000e+00, 0.000000e+00, 9.000000e+00, 0.000000e+00]
  %f1 = corert.executeop(%cpu) "tf._FusedMatMul"(%a, %b, %bias) {fused_ops = ["BiasAdd", "Relu"]} : 1
  %ch2 = corert.print_tensorhandle(%f1, %ch1)
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [2, 2], values = [0.000000e+00, 0.000000e+00, 6.000000e+00, 0.000000e+00]
  %f2 = corert.executeop(%cpu) "tf._FusedMatMul"(%a, %b, %bias) {fused_ops = ["BiasAdd", "Relu6"]} : 1
  %ch3 = corert.print_tensorhandle(%f2, %ch2)
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [2, 2], values = [0.000000e+00, -1.000000e+00, 9.000000e+00, -9.998766e-01]
  %f3 = corert.executeop(%cpu) "tf._FusedMatMul"(%a, %b, %bias) {fused_ops = ["BiasAdd", "Elu"]} : 1
  %ch4 = corert.print_tensorhandle(%f3, %ch3)
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [2, 2], values = [0.000000e+00, -2.250000e+00, 9.000000e+00, -9.000000e-01]
  %f4 = corert.executeop(%cpu) "tf._FusedMatMul"(%a, %b, %bias)
      {fused_ops = ["BiasAdd", "LeakyRelu"], leakyrelu_alpha = 0.1 : f32} : 1
  %ch5 = corert.print_tensorhandle(%f4, %ch4)
  // CHECK-NEXT: tf_cpu_ops.mlir:[[@LINE+2]]:8: error: runtime error: Op '_FusedMatMul' (kernel '_FusedMatMulCpu') construction: Fusion is not implemented: [BiasAdd,Tanh]
  // expected-error @+1 {{Fusion is not implemented: [BiasAdd,Tanh]}}
  %e = corert.executeop(%cpu) "tf._FusedMatMul"(%a, %b, %bias) {fused_ops = ["BiasAdd", "Tanh"]} : 1
  tfrt.return %e : !corert.tensorhandle
}
// CHECK-NEXT: 'fused_matmul' returned <<error: Op '_FusedMatMul' (kernel '_FusedMatMulCpu') construction: Fusion is not implemented: [BiasAdd,Tanh]>>
