// Row copies of the data-movement engines, compiled once per ISA level (see
// isa.h): strided element copies by element size, the stride patterns split
// out so each vectorises (broadcast, reversed, every other, gathered,
// scattered). Contiguous rows are memcpy's.

#include <stdint.h>
#include <string.h>

#include "kernels/array_internal.h"

// The common stride patterns get their own loops so each vectorises.
#define ROW_LOOP(name, T)                                                 \
  static void LOOM_ISA_FN(name)(const void* src_, int64_t ss, void* dst_, \
                                int64_t ds, int64_t n) {                  \
    const T* restrict s = src_;                                           \
    T* restrict d = dst_;                                                 \
    if (ss == 0) {                                                        \
      const T v = s[0];                                                   \
      if (ds == 1) {                                                      \
        for (int64_t i = 0; i < n; ++i) d[i] = v;                         \
      } else {                                                            \
        for (int64_t i = 0; i < n; ++i) d[i * ds] = v;                    \
      }                                                                   \
    } else if (ds == 1) {                                                 \
      if (ss == 1) {                                                      \
        memcpy(d, s, (size_t)n * sizeof(T));                              \
      } else if (ss == -1) {                                              \
        for (int64_t i = 0; i < n; ++i) d[i] = s[-i];                     \
      } else if (ss == 2) {                                               \
        for (int64_t i = 0; i < n; ++i) d[i] = s[2 * i];                  \
      } else {                                                            \
        for (int64_t i = 0; i < n; ++i) d[i] = s[i * ss];                 \
      }                                                                   \
    } else if (ss == 1) {                                                 \
      for (int64_t i = 0; i < n; ++i) d[i * ds] = s[i];                   \
    } else {                                                              \
      for (int64_t i = 0; i < n; ++i) d[i * ds] = s[i * ss];              \
    }                                                                     \
  }

typedef struct elem16_t {
  uint64_t lo, hi;
} elem16_t;

ROW_LOOP(row_u8, uint8_t)
ROW_LOOP(row_u16, uint16_t)
ROW_LOOP(row_u32, uint32_t)
ROW_LOOP(row_u64, uint64_t)
ROW_LOOP(row_u128, elem16_t)

const loom__array_row_table_t LOOM_ISA_FN(loom__array_rows) = {
    .rows = {LOOM_ISA_FN(row_u8), LOOM_ISA_FN(row_u16), LOOM_ISA_FN(row_u32),
             LOOM_ISA_FN(row_u64), LOOM_ISA_FN(row_u128)},
};
