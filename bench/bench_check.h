// CHECK_OK for Loom's benchmarks: a failed call ends the benchmark with
// its status on stderr (a figure from a failed setup would mislead).

#ifndef LOOM_BENCH_BENCH_CHECK_H_
#define LOOM_BENCH_BENCH_CHECK_H_

#include <stdio.h>
#include <stdlib.h>

#include "loom/status.h"

#define CHECK_OK(expr)                                         \
  do {                                                         \
    loom_status_t check_status_ = (expr);                      \
    if (check_status_) {                                       \
      char text_[512];                                         \
      loom_status_format(check_status_, text_, sizeof(text_)); \
      fprintf(stderr, "%s failed: %s\n", #expr, text_);        \
      exit(1);                                                 \
    }                                                          \
  } while (0)

#endif  // LOOM_BENCH_BENCH_CHECK_H_
