#include "progress.h"

#include <time.h>
#include <unistd.h>

double progress_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void progress_begin(progress_t* progress, FILE* stream, int epoch, int epochs,
                    int64_t steps) {
  progress->stream = stream;
  progress->terminal = stream && isatty(fileno(stream)) == 1;
  progress->epoch = epoch;
  progress->epochs = epochs;
  progress->steps = steps;
  progress->start_s = progress_now_s();
  progress->last_draw_s = 0;
  progress->last_line_step = 0;
}

static void format_duration(double seconds, char* text, size_t capacity) {
  long s = (long)(seconds + 0.5);
  if (s >= 3600) {
    snprintf(text, capacity, "%ldh%02ldm", s / 3600, s / 60 % 60);
  } else if (s >= 60) {
    snprintf(text, capacity, "%ldm%02lds", s / 60, s % 60);
  } else {
    snprintf(text, capacity, "%lds", s);
  }
}

void progress_update(progress_t* progress, int64_t step, double loss) {
  if (!progress->stream) return;
  double now = progress_now_s();
  double elapsed = now - progress->start_s;
  double left =
      step > 0 ? elapsed / (double)step * (double)(progress->steps - step) : 0;
  char eta[32];
  format_duration(left, eta, sizeof(eta));
  if (progress->terminal) {
    // Redraw at most 20 times a second, and always at the last step.
    if (step < progress->steps && now - progress->last_draw_s < 0.05) return;
    progress->last_draw_s = now;
    enum { kWidth = 30 };
    char bar[kWidth + 1];
    int filled = (int)(kWidth * step / (progress->steps ? progress->steps : 1));
    for (int i = 0; i < kWidth; ++i) {
      bar[i] = i < filled ? '#' : (i == filled ? '>' : '.');
    }
    bar[kWidth] = '\0';
    fprintf(progress->stream,
            "\r\033[Kepoch %d/%d [%s] %lld/%lld loss %.4f ETA %s",
            progress->epoch, progress->epochs, bar, (long long)step,
            (long long)progress->steps, loss, eta);
    fflush(progress->stream);
    return;
  }
  int64_t every = progress->steps / 10 > 0 ? progress->steps / 10 : 1;
  if (step - progress->last_line_step < every && step < progress->steps) {
    return;
  }
  progress->last_line_step = step;
  fprintf(progress->stream, "epoch %d/%d step %lld/%lld loss %.4f ETA %s\n",
          progress->epoch, progress->epochs, (long long)step,
          (long long)progress->steps, loss, eta);
  fflush(progress->stream);
}

void progress_end(progress_t* progress) {
  if (progress->terminal) {
    fprintf(progress->stream, "\r\033[K");
    fflush(progress->stream);
  }
}
