// Inline shapes.

#include "loom/shape.h"

#include <stdio.h>
#include <string.h>

#include "tensor/shape_internal.h"

loom_status_t loom_shape_initialize(loom_shape_t* out_shape,
                                    const int64_t* dims, int rank) {
  if (!out_shape || (!dims && rank > 0)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_shape_initialize: %s is NULL",
                            !out_shape ? "out_shape" : "dims");
  }
  if (rank < 0 || rank > LOOM_MAX_RANK) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "shape rank %d is outside [0, %d]", rank,
                            LOOM_MAX_RANK);
  }
  for (int i = 0; i < rank; ++i) {
    if (dims[i] < 0 && dims[i] != LOOM_UNKNOWN_DIM) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "shape dimension %d is %lld; dimensions must be "
                              ">= 0 or -1 (unknown)",
                              i, (long long)dims[i]);
    }
  }
  out_shape->rank = rank;
  for (int i = 0; i < LOOM_MAX_RANK; ++i) {
    out_shape->dims[i] = i < rank ? dims[i] : 0;
  }
  return loom_ok_status();
}

loom_shape_t loom_shape_scalar(void) {
  loom_shape_t shape;
  memset(&shape, 0, sizeof(shape));
  return shape;
}

loom_shape_t loom_shape_unknown(void) {
  loom_shape_t shape;
  memset(&shape, 0, sizeof(shape));
  shape.rank = LOOM_UNKNOWN_RANK;
  return shape;
}

bool loom_shape_is_fully_defined(const loom_shape_t* shape) {
  if (shape->rank < 0) return false;
  for (int i = 0; i < shape->rank; ++i) {
    if (shape->dims[i] < 0) return false;
  }
  return true;
}

int64_t loom_shape_num_elements(const loom_shape_t* shape) {
  return loom__shape_num_elements(shape);
}

bool loom_shape_equal(const loom_shape_t* a, const loom_shape_t* b) {
  if (a->rank != b->rank) return false;
  for (int i = 0; i < a->rank; ++i) {
    if (a->dims[i] != b->dims[i]) return false;
  }
  return true;
}

bool loom_shape_is_compatible(const loom_shape_t* a, const loom_shape_t* b) {
  if (a->rank < 0 || b->rank < 0) return true;
  if (a->rank != b->rank) return false;
  for (int i = 0; i < a->rank; ++i) {
    if (a->dims[i] >= 0 && b->dims[i] >= 0 && a->dims[i] != b->dims[i]) {
      return false;
    }
  }
  return true;
}

size_t loom_shape_format(const loom_shape_t* shape, char* buffer,
                         size_t capacity) {
  char text[LOOM_MAX_RANK * 22 + 16];
  size_t length = 0;
  if (shape->rank < 0) {
    length = (size_t)snprintf(text, sizeof(text), "<unknown>");
  } else {
    text[length++] = '[';
    for (int i = 0; i < shape->rank; ++i) {
      if (i) {
        text[length++] = ',';
        text[length++] = ' ';
      }
      if (shape->dims[i] < 0) {
        text[length++] = '?';
      } else {
        length += (size_t)snprintf(text + length, sizeof(text) - length, "%lld",
                                   (long long)shape->dims[i]);
      }
    }
    text[length++] = ']';
    text[length] = '\0';
  }
  if (capacity) snprintf(buffer, capacity, "%s", text);
  return length;
}
