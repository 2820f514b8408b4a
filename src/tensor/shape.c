// Shapes: inline up to LOOM_MAX_RANK, spilled to the shape pool above.

#include "loom/shape.h"

#include <stdio.h>
#include <string.h>

#include "tensor/shape_internal.h"

static loom_status_t initialize(loom_shape_t* out_shape, const int64_t* dims,
                                int rank, int max_rank, const char* function) {
  if (!out_shape || (!dims && rank > 0)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s: %s is NULL",
                            function, !out_shape ? "out_shape" : "dims");
  }
  if (rank < 0 || rank > max_rank) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "shape rank %d is outside [0, %d]", rank, max_rank);
  }
  for (int i = 0; i < rank; ++i) {
    if (dims[i] < 0 && dims[i] != LOOM_UNKNOWN_DIM) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "shape dimension %d is %lld; dimensions must be "
                              ">= 0 or -1 (unknown)",
                              i, (long long)dims[i]);
    }
  }
  if (rank > LOOM_MAX_RANK) {
    const int64_t* spilled = NULL;
    LOOM_RETURN_IF_ERROR(loom__shape_pool_intern(dims, rank, &spilled));
    out_shape->rank = rank;
    out_shape->spilled = spilled;
    return loom_ok_status();
  }
  out_shape->rank = rank;
  for (int i = 0; i < LOOM_MAX_RANK; ++i) {
    out_shape->dims[i] = i < rank ? dims[i] : 0;
  }
  return loom_ok_status();
}

loom_status_t loom_shape_initialize(loom_shape_t* out_shape,
                                    const int64_t* dims, int rank) {
  return initialize(out_shape, dims, rank, LOOM_MAX_RANK,
                    "loom_shape_initialize");
}

loom_status_t loom_shape_initialize_large(loom_shape_t* out_shape,
                                          const int64_t* dims, int rank) {
  return initialize(out_shape, dims, rank, LOOM_MAX_SHAPE_RANK,
                    "loom_shape_initialize_large");
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
  const int64_t* dims = loom_shape_dims(shape);
  for (int i = 0; i < shape->rank; ++i) {
    if (dims[i] < 0) return false;
  }
  return true;
}

int64_t loom_shape_num_elements(const loom_shape_t* shape) {
  return loom__shape_num_elements(shape);
}

bool loom_shape_equal(const loom_shape_t* a, const loom_shape_t* b) {
  if (a->rank != b->rank) return false;
  const int64_t* a_dims = loom_shape_dims(a);
  const int64_t* b_dims = loom_shape_dims(b);
  if (a_dims == b_dims) return true;  // one pool entry, or the same shape
  for (int i = 0; i < a->rank; ++i) {
    if (a_dims[i] != b_dims[i]) return false;
  }
  return true;
}

bool loom_shape_is_compatible(const loom_shape_t* a, const loom_shape_t* b) {
  if (a->rank < 0 || b->rank < 0) return true;
  if (a->rank != b->rank) return false;
  const int64_t* a_dims = loom_shape_dims(a);
  const int64_t* b_dims = loom_shape_dims(b);
  for (int i = 0; i < a->rank; ++i) {
    if (a_dims[i] >= 0 && b_dims[i] >= 0 && a_dims[i] != b_dims[i]) {
      return false;
    }
  }
  return true;
}

size_t loom_shape_format(const loom_shape_t* shape, char* buffer,
                         size_t capacity) {
  char text[LOOM_SHAPE_FORMAT_MAX];
  size_t length = 0;
  if (shape->rank < 0) {
    length = (size_t)snprintf(text, sizeof(text), "<unknown>");
  } else {
    const int64_t* dims = loom_shape_dims(shape);
    text[length++] = '[';
    for (int i = 0; i < shape->rank; ++i) {
      if (i) {
        text[length++] = ',';
        text[length++] = ' ';
      }
      if (dims[i] < 0) {
        text[length++] = '?';
      } else {
        length += (size_t)snprintf(text + length, sizeof(text) - length, "%lld",
                                   (long long)dims[i]);
      }
    }
    text[length++] = ']';
    text[length] = '\0';
  }
  if (capacity) snprintf(buffer, capacity, "%s", text);
  return length;
}
