func.func @f() -> !tfrt.chain {
  %c0 = tfrt.new.chain
  %t = tfrt_dht.create_uninitialized_tensor.f32.2 [2 : i64, 2 : i64]
  %c1 = tfrt_dht.fill_tensor_with_constant.f32 %t, %c0 1.0 : f32
  %c2 = tfrt_dht.set_tensor_with_constant_values.f32 %t, %c1 [1.0 : f32, 2.0 : f32, 3.0 : f32, 4.0 : f32]
  %eq, %c3 = tfrt_dht.tensor_allclose.3ulp.f32 %t, %t, %c2
  %buf, %c4 = tfrt_dht.get_buffer %t, %c3
  %off = tfrt.constant.i64 0
  %size = tfrt.constant.i64 8
  %slice = tfrt_dht.get_buffer_slice %buf, %off, %size
  %shape = ts.build_shape [2 : i64]
  %u, %c5 = tfrt_dht.make_tensor.f32 %slice, %shape, %c4
  %c6 = tfrt_dht.print_tensor %u, %c5
  tfrt.return %c6 : !tfrt.chain
}
