// Timing for Loom's benchmarks: run a measurement several times and report
// the median, so one noisy repetition on a shared machine does not skew it.

#ifndef LOOM_BENCH_BENCH_TIMER_H_
#define LOOM_BENCH_BENCH_TIMER_H_

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline double bench_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int bench_compare_doubles(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

// Calls measure(arg, iterations) `repetitions` times; each call returns the
// nanoseconds it took for `iterations` operations. Returns the median time
// per operation.
static inline double bench_median_ns(double (*measure)(void*, int64_t),
                                     void* arg, int64_t iterations,
                                     int repetitions) {
  double samples[64];
  if (repetitions > 64) repetitions = 64;
  measure(arg, iterations / 10 + 1);  // warm-up
  for (int r = 0; r < repetitions; ++r) {
    samples[r] = measure(arg, iterations) / (double)iterations;
  }
  qsort(samples, (size_t)repetitions, sizeof(double), bench_compare_doubles);
  return samples[repetitions / 2];
}

// Prints one figure as "name median unit".
static inline void bench_report(const char* name, double median,
                                const char* unit) {
  printf("%s %.1f %s\n", name, median, unit);
  fflush(stdout);
}

#endif  // LOOM_BENCH_BENCH_TIMER_H_
