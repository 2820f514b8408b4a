// Typed small vectors: the first N elements live inline, more spill to the
// heap through a loom_allocator_t.
//
//   LOOM_DEFINE_SMALL_VECTOR(loom__dim_vector, int64_t, 8)
//   loom__dim_vector_t dims;
//   loom__dim_vector_initialize(&dims);
//   LOOM_RETURN_IF_ERROR(loom__dim_vector_push(&dims, allocator, 3));
//   int64_t* items = loom__dim_vector_data(&dims);
//   loom__dim_vector_deinitialize(&dims, allocator);
//
// The heap pointer is NULL while the elements are inline, so a vector can be
// moved with a plain struct copy (the old copy must not be used after).

#ifndef LOOM_BASE_SMALL_VECTOR_H_
#define LOOM_BASE_SMALL_VECTOR_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "loom/allocator.h"
#include "loom/status.h"

// Grows a spilled buffer to hold at least `min_capacity` elements; copies
// `size` elements from `current` (inline or heap) and frees the old heap
// buffer. Shared by every instantiation.
loom_status_t loom__small_vector_grow(loom_allocator_t allocator,
                                      const void* current, void* old_heap,
                                      size_t size, size_t element_size,
                                      size_t* inout_capacity,
                                      size_t min_capacity, void** out_heap);

// A vector defined in a .c file need not use every operation: clang warns
// of unused static functions even when inline.
#define LOOM__SMALL_VECTOR_FN __attribute__((unused)) static inline

#define LOOM_DEFINE_SMALL_VECTOR(name, T, N)                                   \
  typedef struct name##_t {                                                    \
    size_t size;                                                               \
    size_t capacity;                                                           \
    T* heap;                                                                   \
    T inline_items[N];                                                         \
  } name##_t;                                                                  \
  LOOM__SMALL_VECTOR_FN void name##_initialize(name##_t* v) {                  \
    v->size = 0;                                                               \
    v->capacity = (N);                                                         \
    v->heap = NULL;                                                            \
  }                                                                            \
  LOOM__SMALL_VECTOR_FN void name##_deinitialize(name##_t* v,                  \
                                                 loom_allocator_t allocator) { \
    if (v->heap) loom_allocator_free(allocator, v->heap);                      \
    name##_initialize(v);                                                      \
  }                                                                            \
  LOOM__SMALL_VECTOR_FN T* name##_data(name##_t* v) {                          \
    return v->heap ? v->heap : v->inline_items;                                \
  }                                                                            \
  LOOM__SMALL_VECTOR_FN T const* name##_const_data(const name##_t* v) {        \
    return v->heap ? v->heap : v->inline_items;                                \
  }                                                                            \
  LOOM__SMALL_VECTOR_FN size_t name##_size(const name##_t* v) {                \
    return v->size;                                                            \
  }                                                                            \
  LOOM__SMALL_VECTOR_FN bool name##_is_inline(const name##_t* v) {             \
    return v->heap == NULL;                                                    \
  }                                                                            \
  LOOM_MUST_USE_RESULT LOOM__SMALL_VECTOR_FN loom_status_t name##_reserve(     \
      name##_t* v, loom_allocator_t allocator, size_t min_capacity) {          \
    if (min_capacity <= v->capacity) return loom_ok_status();                  \
    void* heap = NULL;                                                         \
    /* No elements yet: nothing to copy (and no uninitialised inline  */       \
    /* storage handed to the copy).                                   */       \
    T const* current = v->size ? name##_data(v) : NULL;                        \
    LOOM_RETURN_IF_ERROR(loom__small_vector_grow(                              \
        allocator, current, v->heap, v->size, sizeof(T), &v->capacity,         \
        min_capacity, &heap));                                                 \
    v->heap = (T*)heap;                                                        \
    return loom_ok_status();                                                   \
  }                                                                            \
  LOOM_MUST_USE_RESULT LOOM__SMALL_VECTOR_FN loom_status_t name##_push(        \
      name##_t* v, loom_allocator_t allocator, T value) {                      \
    LOOM_RETURN_IF_ERROR(name##_reserve(v, allocator, v->size + 1));           \
    name##_data(v)[v->size++] = value;                                         \
    return loom_ok_status();                                                   \
  }                                                                            \
  LOOM_MUST_USE_RESULT LOOM__SMALL_VECTOR_FN loom_status_t name##_resize(      \
      name##_t* v, loom_allocator_t allocator, size_t new_size) {              \
    LOOM_RETURN_IF_ERROR(name##_reserve(v, allocator, new_size));              \
    if (new_size > v->size) {                                                  \
      memset(name##_data(v) + v->size, 0, (new_size - v->size) * sizeof(T));   \
    }                                                                          \
    v->size = new_size;                                                        \
    return loom_ok_status();                                                   \
  }                                                                            \
  LOOM__SMALL_VECTOR_FN void name##_clear(name##_t* v) {                       \
    v->size = 0;                                                               \
  }                                                                            \
  /* Removes element `index`, moving the last one into its place. */           \
  LOOM__SMALL_VECTOR_FN void name##_erase_unordered(name##_t* v,               \
                                                    size_t index) {            \
    T* items = name##_data(v);                                                 \
    items[index] = items[--v->size];                                           \
  }                                                                            \
  /* Like resize, but new elements are left uninitialised: for arrays the  */  \
  /* caller fills at once (no zeroing the caller would overwrite).         */  \
  LOOM_MUST_USE_RESULT LOOM__SMALL_VECTOR_FN loom_status_t                     \
      name##_resize_uninitialized(name##_t* v, loom_allocator_t allocator,     \
                                  size_t new_size) {                           \
    LOOM_RETURN_IF_ERROR(name##_reserve(v, allocator, new_size));              \
    v->size = new_size;                                                        \
    return loom_ok_status();                                                   \
  }

#endif  // LOOM_BASE_SMALL_VECTOR_H_
