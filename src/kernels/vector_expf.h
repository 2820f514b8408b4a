// float exp on whole AVX-512 vectors, for the kernel files compiled per
// ISA level (isa.h): Exp, Sigmoid, Softplus, SoftplusGrad and the softmax
// family (Softmax, LogSoftmax, the softmax cross entropies) use it at the
// AVX-512 level; the narrower levels keep SLEEF's exp.
//
// exp x = 2^k e^r with k = round(x / ln 2) and |r| <= ln 2 / 2, r taken
// with ln 2 in two parts (Cody and Waite) so it is exact enough for any k;
// e^r = 1 + r + r^2 P(r), P of degree 4 from our own minimax fit (3e-9
// relative on the interval; about 1e-7 relative, within 1 ulp, over the
// float range once rounded, as SLEEF's u10 expf). vscalefps applies 2^k,
// overflowing to inf and underflowing through the subnormals to 0 as exp does.
// Inputs are first clamped to [-104, 89], beyond which exp is 0 or inf in
// float, so that +-inf take the same path; NaN passes the clamp unchanged
// (minps/maxps return their second operand when either is NaN). About
// twice SLEEF's throughput: 13 vector operations, no table.

#ifndef LOOM_KERNELS_VECTOR_EXPF_H_
#define LOOM_KERNELS_VECTOR_EXPF_H_

#if defined(__AVX512F__)
#include <immintrin.h>

static inline __m512 loom__expf_avx512(__m512 x) {
  x = _mm512_max_ps(_mm512_set1_ps(-104.0f),
                    _mm512_min_ps(_mm512_set1_ps(89.0f), x));
  __m512 k = _mm512_roundscale_ps(
      _mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  // ln 2 = 0.693145751953125 (16 bits: k times it is exact) + 1.4286e-6.
  __m512 r = _mm512_fnmadd_ps(k, _mm512_set1_ps(0.693145751953125f), x);
  r = _mm512_fnmadd_ps(k, _mm512_set1_ps(1.428606765330187e-6f), r);
  __m512 p = _mm512_set1_ps(0.00138146128f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.00836871006f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.041668389f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.166665211f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.49999994f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, k);
}
#endif  // __AVX512F__

#endif  // LOOM_KERNELS_VECTOR_EXPF_H_
