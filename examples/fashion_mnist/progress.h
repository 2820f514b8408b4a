// Training progress on stdout: on a terminal, one line redrawn in place
// with a bar, the step count, the running loss and the time left; otherwise
// a plain line every tenth of the epoch.

#ifndef LOOM_EXAMPLES_FASHION_MNIST_PROGRESS_H_
#define LOOM_EXAMPLES_FASHION_MNIST_PROGRESS_H_

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef struct progress_t {
  FILE* stream;
  bool terminal;
  int epoch, epochs;
  int64_t steps;  // in this epoch
  double start_s;
  double last_draw_s;
  int64_t last_line_step;
} progress_t;

double progress_now_s(void);

// A NULL stream: report nothing (another rank reports).
void progress_begin(progress_t* progress, FILE* stream, int epoch, int epochs,
                    int64_t steps);
// After `step` steps (1-based) with `loss` the mean loss so far.
void progress_update(progress_t* progress, int64_t step, double loss);
// Clears the bar (terminal) before the epoch's summary is printed.
void progress_end(progress_t* progress);

#endif  // LOOM_EXAMPLES_FASHION_MNIST_PROGRESS_H_
