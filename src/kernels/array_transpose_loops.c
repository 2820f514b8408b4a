// Transpose panels, compiled once per ISA level (see isa.h). A panel is a
// few input rows (as many as fill one 64-byte line of an output row) by any
// number of columns: it is walked column block by column block, each block
// transposed through registers — 8x8 blocks of 32-bit elements and 4x4 of
// 64-bit ones with AVX2, 4x4 and 2x2 with SSE2, 8x8 blocks of 16- and 8-bit
// elements with SSE2 everywhere — so that every output row receives whole
// lines, which large transposes write with non-temporal stores (no
// read-for-ownership, no cache pollution). Ragged edges go element by
// element.

#include <emmintrin.h>
#include <immintrin.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "kernels/array_internal.h"

// The edge: rows [i0, rows) x cols [j0, cols) and rows [0, i0) x cols
// [j0, cols) one element at a time.
#define EDGES(T)                                                             \
  do {                                                                       \
    for (int64_t i = 0; i < i0; ++i) {                                       \
      for (int64_t j = j0; j < cols; ++j) dst[j * ds + i] = src[i * ss + j]; \
    }                                                                        \
    for (int64_t i = i0; i < rows; ++i) {                                    \
      for (int64_t j = 0; j < cols; ++j) dst[j * ds + i] = src[i * ss + j];  \
    }                                                                        \
  } while (0)

// The body of a panel: column blocks of B, the panel's row blocks inside
// each, through BLOCK(src, dst, stream). Columns go a 64-byte input line at
// a time (all its blocks before the next line), so every line read is used
// whole while it is in L1 even when power-of-two strides put all the
// panel's rows in one cache set.
#define PANEL(T, B, BLOCK)                                           \
  const T* src = src_;                                               \
  T* dst = dst_;                                                     \
  int64_t i0 = rows - rows % (B), j0 = cols - cols % (B);            \
  const int64_t line =                                               \
      64 / (int64_t)sizeof(T) > (B) ? 64 / (int64_t)sizeof(T) : (B); \
  /* Whole aligned lines per output row, or no streaming. */         \
  stream = stream && (uintptr_t)dst % 64 == 0 &&                     \
           (ds * (int64_t)sizeof(T)) % 64 == 0;                      \
  for (int64_t jl = 0; jl < j0; jl += line) {                        \
    int64_t jend = jl + line < j0 ? jl + line : j0;                  \
    if (stream) {                                                    \
      for (int64_t j = jl; j < jend; j += (B)) {                     \
        for (int64_t i = 0; i < i0; i += (B)) {                      \
          BLOCK(src + i * ss + j, ss, dst + j * ds + i, ds, true);   \
        }                                                            \
      }                                                              \
    } else {                                                         \
      for (int64_t j = jl; j < jend; j += (B)) {                     \
        for (int64_t i = 0; i < i0; i += (B)) {                      \
          BLOCK(src + i * ss + j, ss, dst + j * ds + i, ds, false);  \
        }                                                            \
      }                                                              \
    }                                                                \
  }                                                                  \
  EDGES(T);                                                          \
  if (stream) _mm_sfence()

//===----------------------------------------------------------------------===//
// 8-bit
//===----------------------------------------------------------------------===//

static inline void store_u64(uint8_t* dst, __m128i v, bool stream) {
  if (stream) {
    _mm_stream_si64((long long*)(void*)dst, _mm_cvtsi128_si64(v));
  } else {
    _mm_storel_epi64((__m128i*)(void*)dst, v);
  }
}

static inline void block_u8(const uint8_t* src, int64_t ss, uint8_t* dst,
                            int64_t ds, bool stream) {
  __m128i r0 = _mm_loadl_epi64((const __m128i*)(const void*)(src + 0 * ss));
  __m128i r1 = _mm_loadl_epi64((const __m128i*)(const void*)(src + 1 * ss));
  __m128i r2 = _mm_loadl_epi64((const __m128i*)(const void*)(src + 2 * ss));
  __m128i r3 = _mm_loadl_epi64((const __m128i*)(const void*)(src + 3 * ss));
  __m128i r4 = _mm_loadl_epi64((const __m128i*)(const void*)(src + 4 * ss));
  __m128i r5 = _mm_loadl_epi64((const __m128i*)(const void*)(src + 5 * ss));
  __m128i r6 = _mm_loadl_epi64((const __m128i*)(const void*)(src + 6 * ss));
  __m128i r7 = _mm_loadl_epi64((const __m128i*)(const void*)(src + 7 * ss));
  __m128i a0 = _mm_unpacklo_epi8(r0, r1);
  __m128i a1 = _mm_unpacklo_epi8(r2, r3);
  __m128i a2 = _mm_unpacklo_epi8(r4, r5);
  __m128i a3 = _mm_unpacklo_epi8(r6, r7);
  __m128i b0 = _mm_unpacklo_epi16(a0, a1);
  __m128i b1 = _mm_unpackhi_epi16(a0, a1);
  __m128i b2 = _mm_unpacklo_epi16(a2, a3);
  __m128i b3 = _mm_unpackhi_epi16(a2, a3);
  __m128i c0 = _mm_unpacklo_epi32(b0, b2);
  __m128i c1 = _mm_unpackhi_epi32(b0, b2);
  __m128i c2 = _mm_unpacklo_epi32(b1, b3);
  __m128i c3 = _mm_unpackhi_epi32(b1, b3);
  store_u64(dst + 0 * ds, c0, stream);
  store_u64(dst + 1 * ds, _mm_unpackhi_epi64(c0, c0), stream);
  store_u64(dst + 2 * ds, c1, stream);
  store_u64(dst + 3 * ds, _mm_unpackhi_epi64(c1, c1), stream);
  store_u64(dst + 4 * ds, c2, stream);
  store_u64(dst + 5 * ds, _mm_unpackhi_epi64(c2, c2), stream);
  store_u64(dst + 6 * ds, c3, stream);
  store_u64(dst + 7 * ds, _mm_unpackhi_epi64(c3, c3), stream);
}

static void LOOM_ISA_FN(panel_u8)(const void* src_, int64_t ss, void* dst_,
                                  int64_t ds, int64_t rows, int64_t cols,
                                  bool stream) {
  PANEL(uint8_t, 8, block_u8);
}

//===----------------------------------------------------------------------===//
// 16-bit
//===----------------------------------------------------------------------===//

static inline void store_u128(void* dst, __m128i v, bool stream) {
  if (stream) {
    _mm_stream_si128((__m128i*)dst, v);
  } else {
    _mm_storeu_si128((__m128i*)dst, v);
  }
}

static inline void block_u16(const uint16_t* src, int64_t ss, uint16_t* dst,
                             int64_t ds, bool stream) {
  __m128i r0 = _mm_loadu_si128((const __m128i*)(const void*)(src + 0 * ss));
  __m128i r1 = _mm_loadu_si128((const __m128i*)(const void*)(src + 1 * ss));
  __m128i r2 = _mm_loadu_si128((const __m128i*)(const void*)(src + 2 * ss));
  __m128i r3 = _mm_loadu_si128((const __m128i*)(const void*)(src + 3 * ss));
  __m128i r4 = _mm_loadu_si128((const __m128i*)(const void*)(src + 4 * ss));
  __m128i r5 = _mm_loadu_si128((const __m128i*)(const void*)(src + 5 * ss));
  __m128i r6 = _mm_loadu_si128((const __m128i*)(const void*)(src + 6 * ss));
  __m128i r7 = _mm_loadu_si128((const __m128i*)(const void*)(src + 7 * ss));
  __m128i a0 = _mm_unpacklo_epi16(r0, r1);
  __m128i a1 = _mm_unpackhi_epi16(r0, r1);
  __m128i a2 = _mm_unpacklo_epi16(r2, r3);
  __m128i a3 = _mm_unpackhi_epi16(r2, r3);
  __m128i a4 = _mm_unpacklo_epi16(r4, r5);
  __m128i a5 = _mm_unpackhi_epi16(r4, r5);
  __m128i a6 = _mm_unpacklo_epi16(r6, r7);
  __m128i a7 = _mm_unpackhi_epi16(r6, r7);
  __m128i b0 = _mm_unpacklo_epi32(a0, a2);
  __m128i b1 = _mm_unpackhi_epi32(a0, a2);
  __m128i b2 = _mm_unpacklo_epi32(a1, a3);
  __m128i b3 = _mm_unpackhi_epi32(a1, a3);
  __m128i b4 = _mm_unpacklo_epi32(a4, a6);
  __m128i b5 = _mm_unpackhi_epi32(a4, a6);
  __m128i b6 = _mm_unpacklo_epi32(a5, a7);
  __m128i b7 = _mm_unpackhi_epi32(a5, a7);
  store_u128(dst + 0 * ds, _mm_unpacklo_epi64(b0, b4), stream);
  store_u128(dst + 1 * ds, _mm_unpackhi_epi64(b0, b4), stream);
  store_u128(dst + 2 * ds, _mm_unpacklo_epi64(b1, b5), stream);
  store_u128(dst + 3 * ds, _mm_unpackhi_epi64(b1, b5), stream);
  store_u128(dst + 4 * ds, _mm_unpacklo_epi64(b2, b6), stream);
  store_u128(dst + 5 * ds, _mm_unpackhi_epi64(b2, b6), stream);
  store_u128(dst + 6 * ds, _mm_unpacklo_epi64(b3, b7), stream);
  store_u128(dst + 7 * ds, _mm_unpackhi_epi64(b3, b7), stream);
}

static void LOOM_ISA_FN(panel_u16)(const void* src_, int64_t ss, void* dst_,
                                   int64_t ds, int64_t rows, int64_t cols,
                                   bool stream) {
  PANEL(uint16_t, 8, block_u16);
}

//===----------------------------------------------------------------------===//
// 32-bit
//===----------------------------------------------------------------------===//

#if defined(__AVX2__)
#define BLOCK32 8

static inline void store_ps(float* dst, __m256 v, bool stream) {
  if (stream) {
    _mm256_stream_ps(dst, v);
  } else {
    _mm256_storeu_ps(dst, v);
  }
}

static inline void block_u32(const uint32_t* src_, int64_t ss, uint32_t* dst_,
                             int64_t ds, bool stream) {
  const float* src = (const float*)(const void*)src_;
  float* dst = (float*)(void*)dst_;
  __m256 r0 = _mm256_loadu_ps(src + 0 * ss);
  __m256 r1 = _mm256_loadu_ps(src + 1 * ss);
  __m256 r2 = _mm256_loadu_ps(src + 2 * ss);
  __m256 r3 = _mm256_loadu_ps(src + 3 * ss);
  __m256 r4 = _mm256_loadu_ps(src + 4 * ss);
  __m256 r5 = _mm256_loadu_ps(src + 5 * ss);
  __m256 r6 = _mm256_loadu_ps(src + 6 * ss);
  __m256 r7 = _mm256_loadu_ps(src + 7 * ss);
  __m256 t0 = _mm256_unpacklo_ps(r0, r1);
  __m256 t1 = _mm256_unpackhi_ps(r0, r1);
  __m256 t2 = _mm256_unpacklo_ps(r2, r3);
  __m256 t3 = _mm256_unpackhi_ps(r2, r3);
  __m256 t4 = _mm256_unpacklo_ps(r4, r5);
  __m256 t5 = _mm256_unpackhi_ps(r4, r5);
  __m256 t6 = _mm256_unpacklo_ps(r6, r7);
  __m256 t7 = _mm256_unpackhi_ps(r6, r7);
  __m256 u0 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
  __m256 u1 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
  __m256 u2 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
  __m256 u3 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
  __m256 u4 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(1, 0, 1, 0));
  __m256 u5 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(3, 2, 3, 2));
  __m256 u6 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(1, 0, 1, 0));
  __m256 u7 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(3, 2, 3, 2));
  store_ps(dst + 0 * ds, _mm256_permute2f128_ps(u0, u4, 0x20), stream);
  store_ps(dst + 1 * ds, _mm256_permute2f128_ps(u1, u5, 0x20), stream);
  store_ps(dst + 2 * ds, _mm256_permute2f128_ps(u2, u6, 0x20), stream);
  store_ps(dst + 3 * ds, _mm256_permute2f128_ps(u3, u7, 0x20), stream);
  store_ps(dst + 4 * ds, _mm256_permute2f128_ps(u0, u4, 0x31), stream);
  store_ps(dst + 5 * ds, _mm256_permute2f128_ps(u1, u5, 0x31), stream);
  store_ps(dst + 6 * ds, _mm256_permute2f128_ps(u2, u6, 0x31), stream);
  store_ps(dst + 7 * ds, _mm256_permute2f128_ps(u3, u7, 0x31), stream);
}
#else
#define BLOCK32 4

static inline void store_ps(float* dst, __m128 v, bool stream) {
  if (stream) {
    _mm_stream_ps(dst, v);
  } else {
    _mm_storeu_ps(dst, v);
  }
}

static inline void block_u32(const uint32_t* src_, int64_t ss, uint32_t* dst_,
                             int64_t ds, bool stream) {
  const float* src = (const float*)(const void*)src_;
  float* dst = (float*)(void*)dst_;
  __m128 r0 = _mm_loadu_ps(src + 0 * ss);
  __m128 r1 = _mm_loadu_ps(src + 1 * ss);
  __m128 r2 = _mm_loadu_ps(src + 2 * ss);
  __m128 r3 = _mm_loadu_ps(src + 3 * ss);
  _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
  store_ps(dst + 0 * ds, r0, stream);
  store_ps(dst + 1 * ds, r1, stream);
  store_ps(dst + 2 * ds, r2, stream);
  store_ps(dst + 3 * ds, r3, stream);
}
#endif

static void LOOM_ISA_FN(panel_u32)(const void* src_, int64_t ss, void* dst_,
                                   int64_t ds, int64_t rows, int64_t cols,
                                   bool stream) {
  PANEL(uint32_t, BLOCK32, block_u32);
}

//===----------------------------------------------------------------------===//
// 64-bit
//===----------------------------------------------------------------------===//

#if defined(__AVX2__)
#define BLOCK64 4

static inline void store_pd(double* dst, __m256d v, bool stream) {
  if (stream) {
    _mm256_stream_pd(dst, v);
  } else {
    _mm256_storeu_pd(dst, v);
  }
}

static inline void block_u64(const uint64_t* src_, int64_t ss, uint64_t* dst_,
                             int64_t ds, bool stream) {
  const double* src = (const double*)(const void*)src_;
  double* dst = (double*)(void*)dst_;
  __m256d r0 = _mm256_loadu_pd(src + 0 * ss);
  __m256d r1 = _mm256_loadu_pd(src + 1 * ss);
  __m256d r2 = _mm256_loadu_pd(src + 2 * ss);
  __m256d r3 = _mm256_loadu_pd(src + 3 * ss);
  __m256d t0 = _mm256_unpacklo_pd(r0, r1);
  __m256d t1 = _mm256_unpackhi_pd(r0, r1);
  __m256d t2 = _mm256_unpacklo_pd(r2, r3);
  __m256d t3 = _mm256_unpackhi_pd(r2, r3);
  store_pd(dst + 0 * ds, _mm256_permute2f128_pd(t0, t2, 0x20), stream);
  store_pd(dst + 1 * ds, _mm256_permute2f128_pd(t1, t3, 0x20), stream);
  store_pd(dst + 2 * ds, _mm256_permute2f128_pd(t0, t2, 0x31), stream);
  store_pd(dst + 3 * ds, _mm256_permute2f128_pd(t1, t3, 0x31), stream);
}
#else
#define BLOCK64 2

static inline void store_pd(double* dst, __m128d v, bool stream) {
  if (stream) {
    _mm_stream_pd(dst, v);
  } else {
    _mm_storeu_pd(dst, v);
  }
}

static inline void block_u64(const uint64_t* src_, int64_t ss, uint64_t* dst_,
                             int64_t ds, bool stream) {
  const double* src = (const double*)(const void*)src_;
  double* dst = (double*)(void*)dst_;
  __m128d r0 = _mm_loadu_pd(src);
  __m128d r1 = _mm_loadu_pd(src + ss);
  store_pd(dst, _mm_unpacklo_pd(r0, r1), stream);
  store_pd(dst + ds, _mm_unpackhi_pd(r0, r1), stream);
}
#endif

static void LOOM_ISA_FN(panel_u64)(const void* src_, int64_t ss, void* dst_,
                                   int64_t ds, int64_t rows, int64_t cols,
                                   bool stream) {
  PANEL(uint64_t, BLOCK64, block_u64);
}

//===----------------------------------------------------------------------===//
// 128-bit
//===----------------------------------------------------------------------===//

typedef struct u128_t {
  uint64_t lo, hi;
} u128_t;

static inline void block_u128(const u128_t* src, int64_t ss, u128_t* dst,
                              int64_t ds, bool stream) {
  store_u128(dst, _mm_loadu_si128((const __m128i*)(const void*)src), stream);
  (void)ss;
  (void)ds;
}

static void LOOM_ISA_FN(panel_u128)(const void* src_, int64_t ss, void* dst_,
                                    int64_t ds, int64_t rows, int64_t cols,
                                    bool stream) {
  PANEL(u128_t, 1, block_u128);
}

const loom__transpose_table_t LOOM_ISA_FN(loom__transpose_panels) = {
    LOOM_ISA_FN(panel_u8),  LOOM_ISA_FN(panel_u16),  LOOM_ISA_FN(panel_u32),
    LOOM_ISA_FN(panel_u64), LOOM_ISA_FN(panel_u128),
};
