// loom_tstring_t: the 24-byte string element of string tensors, laid out
// exactly as TensorFlow's TF_TString so string tensors cross the C API
// without conversion.
//
// The low two bits of the first byte give the representation:
//   SMALL  (0): up to 22 bytes inline, NUL-terminated;
//   LARGE  (1): heap memory owned by the string;
//   OFFSET (2): bytes at a 32-bit offset from the string itself (read-only);
//   VIEW   (3): borrowed memory (read-only; the owner keeps it alive).
// Sizes are stored shifted left by two next to the type bits (on a
// big-endian target, the type bits are the low bits of the size word's high
// byte, as TensorFlow does it).
//
// The rules are TensorFlow's too (its header-only ctstring, which plugins
// compile into themselves): LARGE bytes come from malloc and are freed with
// free(), capacities are 16-byte blocks minus the NUL, and strings grow and
// shrink as ctstring's do. So a string made by a plugin's inline
// TF_TString_* code may be grown or freed by Loom, and the reverse. The
// string API takes no allocator for that reason.

#ifndef LOOM_TSTRING_H_
#define LOOM_TSTRING_H_

#include <stddef.h>
#include <stdint.h>

#include "loom/macros.h"
#include "loom/status.h"

LOOM_EXTERN_C_BEGIN

typedef enum loom_tstring_type_t {
  LOOM_TSTRING_SMALL = 0,
  LOOM_TSTRING_LARGE = 1,
  LOOM_TSTRING_OFFSET = 2,
  LOOM_TSTRING_VIEW = 3,
} loom_tstring_type_t;

#define LOOM_TSTRING_SMALL_CAPACITY 22

typedef struct loom_tstring_t {
  union {
    struct {
      uint8_t size;  // size << 2 | LOOM_TSTRING_SMALL
      char str[LOOM_TSTRING_SMALL_CAPACITY + 1];
    } small;
    struct {
      size_t size;  // size << 2 | LOOM_TSTRING_LARGE
      size_t capacity;
      char* ptr;
    } large;
    struct {
      uint32_t size;  // size << 2 | LOOM_TSTRING_OFFSET
      uint32_t offset;
      uint32_t count;
    } offset;
    struct {
      size_t size;  // size << 2 | LOOM_TSTRING_VIEW
      const char* ptr;
    } view;
    uint8_t raw[24];
  } u;
} loom_tstring_t;

// An empty SMALL string.
LOOM_API void loom_tstring_initialize(loom_tstring_t* str);

// Frees LARGE memory and leaves an empty string.
LOOM_API void loom_tstring_deinitialize(loom_tstring_t* str);

LOOM_API loom_tstring_type_t loom_tstring_type(const loom_tstring_t* str);
LOOM_API size_t loom_tstring_size(const loom_tstring_t* str);
// Bytes storable without reallocating (0 for OFFSET and VIEW).
LOOM_API size_t loom_tstring_capacity(const loom_tstring_t* str);
LOOM_API const char* loom_tstring_data(const loom_tstring_t* str);

// Replaces the contents with a copy of data[0, size) (SMALL or LARGE); data
// may lie in the string's own bytes. Every function that allocates returns
// RESOURCE_EXHAUSTED, leaving the string unchanged, when malloc fails or a
// size cannot be encoded.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_tstring_copy(loom_tstring_t* str, const char* data, size_t size);

// Makes the string a VIEW of data[0, size), freeing what it owned.
LOOM_API void loom_tstring_assign_view(loom_tstring_t* str, const char* data,
                                       size_t size);

// Sets the size, keeping the first min(old, new) bytes; new bytes are not
// initialised. Turns OFFSET/VIEW strings into owned ones. *out_data (may be
// NULL) receives the writable bytes.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_tstring_resize_uninitialized(
    loom_tstring_t* str, size_t new_size, char** out_data);

// Ensures room for `capacity` bytes without changing the contents (nothing
// to do up to the SMALL capacity: a VIEW or OFFSET string is copied when it
// is next written).
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_tstring_reserve(loom_tstring_t* str, size_t capacity);

// loom_tstring_reserve of at least twice the current capacity, when
// `capacity` exceeds it.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_tstring_reserve_amortized(loom_tstring_t* str, size_t capacity);

// Appends data[0, size) (which may be the string's own bytes) with
// amortised growth (loom_tstring_reserve_amortized).
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_tstring_append(loom_tstring_t* str, const char* data, size_t size);

// dst becomes a copy of src: owned bytes are duplicated, VIEW stays a view,
// OFFSET becomes a view of the same bytes.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_tstring_assign(loom_tstring_t* dst, const loom_tstring_t* src);

// dst takes src's contents; src is left empty when it owned heap memory.
LOOM_API void loom_tstring_move(loom_tstring_t* dst, loom_tstring_t* src);

LOOM_EXTERN_C_END

#endif  // LOOM_TSTRING_H_
