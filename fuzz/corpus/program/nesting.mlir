func.func @f(%x: complex<complex<complex<complex<complex<complex<complex<complex<complex<complex<complex<complex<complex<complex<complex<complex<complex<complex<complex<complex<f32>>>>>>>>>>>>>>>>>>>>, %y: tensor<tensor<tensor<tensor<tensor<tensor<tensor<tensor<tensor<tensor<tensor<tensor<tensor<tensor<tensor<tensor<tensor<tensor<tensor<tensor<tensor<f32>>>>>>>>>>>>>>>>>>>>>) {
  %z = "a.b"() {k = [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]} : () -> i32 loc((((((((((((((((((((((((((((((("x")))))))))))))))))))))))))))))))
  tfrt.return
}
