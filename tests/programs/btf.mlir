// TFRT's binary tensor format: btf.read_dense_tensor reads the tensors of
// inputs/three_tensors.btf (written by NumPy: an i32 [2, 3], an f32 [3]
// and an i64 scalar); btf.write_dense_tensors writes a file that reads
// back the same. Paths are relative to the working directory.
// RUN: cd %S/inputs && not loom run --plugin %tfrt_test_ops -functions=read,read_errors %s 2>&1 | FileCheck %s
// RUN: rm -rf %t && mkdir -p %t && cd %t && loom run --plugin %tfrt_test_ops -functions=write,read_back %s | FileCheck %s --check-prefix=WRITE

// CHECK-LABEL: --- Running 'read'
// CHECK-NEXT: DenseHostTensor dtype = i32, shape = [2, 3], values = [0, -3, -6, -9, -12, -15]
// CHECK-NEXT: DenseHostTensor dtype = f32, shape = [3], values = [5.000000e-01, -1.250000e+00, 3.000000e+10]
// CHECK-NEXT: DenseHostTensor dtype = i64, shape = [], values = [7]
func.func @read() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %path = "tfrt_test.get_string"() {value = "three_tensors.btf"} : () -> !tfrt.string
  %zero = tfrt.constant.i32 0
  %one = tfrt.constant.i32 1
  %two = tfrt.constant.i32 2
  %a = "btf.read_dense_tensor.i32.2"(%path, %zero) : (!tfrt.string, i32) -> !t.tensor
  %b = "btf.read_dense_tensor.f32.1"(%path, %one) : (!tfrt.string, i32) -> !t.tensor
  %c = "btf.read_dense_tensor.i64.0"(%path, %two) : (!tfrt.string, i32) -> !t.tensor
  %ch1 = tfrt_dht.print_tensor %a, %ch0
  %ch2 = tfrt_dht.print_tensor %b, %ch1
  %ch3 = tfrt_dht.print_tensor %c, %ch2
  tfrt.return %ch3 : !tfrt.chain
}

// CHECK-LABEL: --- Running 'read_errors'
// CHECK: btf.mlir:[[@LINE+13]]:8: error: runtime error: 'btf.read_dense_tensor.f32.2': three_tensors.btf: tensor 0: it is a rank-2 tensor of i32, expected rank 2 of float
// CHECK: btf.mlir:[[@LINE+13]]:8: error: runtime error: 'btf.read_dense_tensor.i32.2': three_tensors.btf: tensor 3: the file holds 3 tensors
// CHECK: btf.mlir:[[@LINE+13]]:8: error: runtime error: 'btf.read_dense_tensor.i32.1': cannot open 'nowhere.btf'
// CHECK: btf.mlir:[[@LINE+15]]:8: error: runtime error: 'btf.read_dense_tensor.f32.1': truncated.btf: tensor 0: its data is larger than the file
// CHECK: 'read_errors' returned <<error
func.func @read_errors() -> (!t.tensor, !t.tensor, !t.tensor, !t.tensor) {
  %ch0 = tfrt.new.chain
  %path = "tfrt_test.get_string"() {value = "three_tensors.btf"} : () -> !tfrt.string
  %missing = "tfrt_test.get_string"() {value = "nowhere.btf"} : () -> !tfrt.string
  %zero = tfrt.constant.i32 0
  %three = tfrt.constant.i32 3
  // A tensor of another dtype, a tensor past the last, and a file that
  // does not exist.
  %a = "btf.read_dense_tensor.f32.2"(%path, %zero) : (!tfrt.string, i32) -> !t.tensor
  %b = "btf.read_dense_tensor.i32.2"(%path, %three) : (!tfrt.string, i32) -> !t.tensor
  %c = "btf.read_dense_tensor.i32.1"(%missing, %zero) : (!tfrt.string, i32) -> !t.tensor
  // A header that promises more data than the file holds.
  %truncated = "tfrt_test.get_string"() {value = "truncated.btf"} : () -> !tfrt.string
  %d = "btf.read_dense_tensor.f32.1"(%truncated, %zero) : (!tfrt.string, i32) -> !t.tensor
  tfrt.return %a, %b, %c, %d : !t.tensor, !t.tensor, !t.tensor, !t.tensor
}

// Functions run one after the other: the second reads what the first
// wrote.
// WRITE-LABEL: --- Running 'write'
// WRITE-LABEL: --- Running 'read_back'
// WRITE-NEXT: DenseHostTensor dtype = u8, shape = [3], values = [1, 2, 255]
// WRITE-NEXT: DenseHostTensor dtype = f64, shape = [2, 1], values = [-2.500000e+00, 1.000000e-03]
func.func @write() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %path = "tfrt_test.get_string"() {value = "out.btf"} : () -> !tfrt.string
  %u = tfrt_dht.create_uninitialized_tensor.ui8.1 [3 : i64]
  %c1 = tfrt_dht.set_tensor_with_constant_values.ui8 %u, %ch0 [1 : ui8, 2 : ui8, 255 : ui8]
  %d = tfrt_dht.create_uninitialized_tensor.f64.2 [2 : i64, 1 : i64]
  %c2 = tfrt_dht.set_tensor_with_constant_values.f64 %d, %c1 [-2.5 : f64, 0.001 : f64]
  %c3 = "btf.write_dense_tensors"(%path, %c2, %u, %d)
      : (!tfrt.string, !tfrt.chain, !t.tensor, !t.tensor) -> !tfrt.chain
  tfrt.return %c3 : !tfrt.chain
}

func.func @read_back() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %path = "tfrt_test.get_string"() {value = "out.btf"} : () -> !tfrt.string
  %zero = tfrt.constant.i32 0
  %one = tfrt.constant.i32 1
  %u = "btf.read_dense_tensor.ui8.1"(%path, %zero) : (!tfrt.string, i32) -> !t.tensor
  %d = "btf.read_dense_tensor.f64.2"(%path, %one) : (!tfrt.string, i32) -> !t.tensor
  %c1 = tfrt_dht.print_tensor %u, %ch0
  %c2 = tfrt_dht.print_tensor %d, %c1
  tfrt.return %c2 : !tfrt.chain
}
