// TF_TString-compatible strings (see loom/tstring.h for the layout).
//
// Every rule here is the one of TensorFlow's header-only ctstring, which
// plugins compile into themselves: the size encoding of each byte order,
// the capacities (16-byte blocks minus the NUL), when a LARGE string grows,
// shrinks or keeps its block, and the C heap (malloc/realloc/free) for
// LARGE bytes. A string either side makes is then read, grown and freed by
// the other. Loom adds what the inline code leaves out: an allocation that
// fails leaves the string as it was and is reported, and a source that lies
// in the string's own bytes is safe to copy or append.

#include "loom/tstring.h"

#include <assert.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tensor/tstring_internal.h"

_Static_assert(sizeof(loom_tstring_t) == 24, "TF_TString is 24 bytes");

#if (defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) && \
     __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) ||                  \
    defined(_WIN32)
#define LOOM_TSTRING_LITTLE_ENDIAN 1
#elif defined(__BYTE_ORDER__) && defined(__ORDER_BIG_ENDIAN__) && \
    __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define LOOM_TSTRING_LITTLE_ENDIAN 0
#else
#error "loom_tstring_t needs the target's byte order"
#endif

// The type bits live in the low two bits of the string's first byte. On a
// little-endian target that byte is the low byte of the size word, which
// holds size << 2 | type. On a big-endian target it is the high byte: the
// size's low 56 bits stay in place (its next six bits move up by two) and
// the type takes the high byte's low two bits.
#if LOOM_TSTRING_LITTLE_ENDIAN
static const size_t kMaxSize = SIZE_MAX >> 2;

static size_t encode_size(size_t size, loom_tstring_type_t type) {
  return (size << 2) | (size_t)type;
}

static size_t decode_size(size_t word) {
  return word >> 2;
}

static uint32_t from_le32(uint32_t word) {
  return word;
}
#else
static const unsigned kHighByteShift = (sizeof(size_t) - 1) * 8;
// Sizes whose bits all survive the encoding.
static const size_t kMaxSize = SIZE_MAX >> 10;

static size_t encode_size(size_t size, loom_tstring_type_t type) {
  size_t low = ((size_t)1 << kHighByteShift) - 1;
  return (size & low) | ((size << 2) & ~low) | ((size_t)type << kHighByteShift);
}

static size_t decode_size(size_t word) {
  size_t low = ((size_t)1 << kHighByteShift) - 1;
  size_t high_six = ~low & ~((size_t)3 << kHighByteShift);
  return (word & low) | ((word & high_six) >> 2);
}

// OFFSET sizes are stored little-endian on every target.
static uint32_t from_le32(uint32_t word) {
  return __builtin_bswap32(word);
}
#endif

// LARGE capacities: whole 16-byte blocks, one byte of which is the NUL.
static size_t large_capacity_for(size_t size) {
  return ((size + 16) & ~(size_t)15) - 1;
}

//===----------------------------------------------------------------------===//
// The C heap, behind the tests' allocation gate
//===----------------------------------------------------------------------===//

// Process-wide because the layout leaves no room for an allocator: see
// loom__tstring_set_allocation_gate. One atomic pointer, so that a string
// another thread grows meanwhile sees a whole gate, old or new.
static _Atomic(const loom__tstring_allocation_gate_t*) g_allocation_gate;

void loom__tstring_set_allocation_gate(
    const loom__tstring_allocation_gate_t* gate) {
  atomic_store_explicit(&g_allocation_gate, gate, memory_order_release);
}

static bool allocation_allowed(size_t size) {
  const loom__tstring_allocation_gate_t* gate =
      atomic_load_explicit(&g_allocation_gate, memory_order_acquire);
  return !gate || gate->allow(size, gate->context);
}

static char* heap_allocate(size_t size) {
  return allocation_allowed(size) ? (char*)malloc(size) : NULL;
}

static char* heap_reallocate(char* block, size_t size) {
  return allocation_allowed(size) ? (char*)realloc(block, size) : NULL;
}

static loom_status_t out_of_memory(const char* op, size_t size,
                                   size_t capacity) {
  return loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                          "%s: out of memory for a string of %zu bytes (a "
                          "block of %zu bytes)",
                          op, size, capacity + 1);
}

static loom_status_t check_encodable(const char* op, const char* argument,
                                     size_t size) {
  if (size <= kMaxSize) return loom_ok_status();
  return loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                          "%s: %s: a string of %zu bytes is too large (at "
                          "most %zu)",
                          op, argument, size, kMaxSize);
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

void loom_tstring_initialize(loom_tstring_t* str) {
  if (str) memset(str->u.raw, 0, sizeof(str->u.raw));
}

loom_tstring_type_t loom_tstring_type(const loom_tstring_t* str) {
  if (!str) return LOOM_TSTRING_SMALL;
  return (loom_tstring_type_t)(str->u.raw[0] & 3);
}

void loom_tstring_deinitialize(loom_tstring_t* str) {
  if (!str) return;
  if (loom_tstring_type(str) == LOOM_TSTRING_LARGE) free(str->u.large.ptr);
  loom_tstring_initialize(str);
}

size_t loom_tstring_size(const loom_tstring_t* str) {
  if (!str) return 0;
  switch (loom_tstring_type(str)) {
    case LOOM_TSTRING_SMALL:
      return str->u.small.size >> 2;
    case LOOM_TSTRING_LARGE:
      return decode_size(str->u.large.size);
    case LOOM_TSTRING_OFFSET:
      return from_le32(str->u.offset.size) >> 2;
    case LOOM_TSTRING_VIEW:
    default:
      return decode_size(str->u.view.size);
  }
}

size_t loom_tstring_capacity(const loom_tstring_t* str) {
  switch (loom_tstring_type(str)) {
    case LOOM_TSTRING_SMALL:
      return str ? LOOM_TSTRING_SMALL_CAPACITY : 0;
    case LOOM_TSTRING_LARGE:
      return str->u.large.capacity;
    default:
      return 0;
  }
}

const char* loom_tstring_data(const loom_tstring_t* str) {
  if (!str) return NULL;
  switch (loom_tstring_type(str)) {
    case LOOM_TSTRING_SMALL:
      return str->u.small.str;
    case LOOM_TSTRING_LARGE:
      return str->u.large.ptr;
    case LOOM_TSTRING_OFFSET:
      return (const char*)str + str->u.offset.offset;
    case LOOM_TSTRING_VIEW:
    default:
      return str->u.view.ptr;
  }
}

//===----------------------------------------------------------------------===//
// Resizing and reserving: ctstring's capacity rules
//===----------------------------------------------------------------------===//

static loom_status_t resize(const char* op, loom_tstring_t* str,
                            size_t new_size, char** out_data) {
  LOOM_RETURN_IF_ERROR(check_encodable(op, "new_size", new_size));
  loom_tstring_type_t type = loom_tstring_type(str);
  size_t old_size = loom_tstring_size(str);
  size_t keep = old_size < new_size ? old_size : new_size;
  const char* old_data = loom_tstring_data(str);

  if (new_size <= LOOM_TSTRING_SMALL_CAPACITY) {
    // Any string of this size becomes SMALL. The bytes kept may be the heap
    // block freed below, or overlap this struct (OFFSET): go through a
    // temporary.
    char kept[LOOM_TSTRING_SMALL_CAPACITY];
    if (type != LOOM_TSTRING_SMALL && keep) memcpy(kept, old_data, keep);
    char* old_heap = type == LOOM_TSTRING_LARGE ? str->u.large.ptr : NULL;
    str->u.small.size = (uint8_t)encode_size(new_size, LOOM_TSTRING_SMALL);
    if (type != LOOM_TSTRING_SMALL && keep) {
      memcpy(str->u.small.str, kept, keep);
    }
    str->u.small.str[new_size] = '\0';
    free(old_heap);
    if (out_data) *out_data = str->u.small.str;
    return loom_ok_status();
  }

  // LARGE: a string shrunk below half its capacity gives half back; one
  // grown past its capacity gets just enough blocks; otherwise the block
  // stays.
  size_t old_capacity = loom_tstring_capacity(str);
  size_t new_capacity = old_capacity;
  if (new_size < old_size && new_size < old_capacity / 2) {
    new_capacity = large_capacity_for(old_capacity / 2);
  } else if (new_size > old_capacity) {
    new_capacity = large_capacity_for(new_size);
  }
  char* heap = NULL;
  if (new_capacity == old_capacity) {
    // Only a LARGE string can keep its capacity above SMALL's.
    assert(type == LOOM_TSTRING_LARGE);
    heap = str->u.large.ptr;
  } else if (type == LOOM_TSTRING_LARGE) {
    heap = heap_reallocate(str->u.large.ptr, new_capacity + 1);
    if (!heap) return out_of_memory(op, new_size, new_capacity);
  } else {
    heap = heap_allocate(new_capacity + 1);
    if (!heap) return out_of_memory(op, new_size, new_capacity);
    if (keep) memcpy(heap, old_data, keep);
  }
  str->u.large.size = encode_size(new_size, LOOM_TSTRING_LARGE);
  str->u.large.capacity = new_capacity;
  str->u.large.ptr = heap;
  heap[new_size] = '\0';
  if (out_data) *out_data = heap;
  return loom_ok_status();
}

static loom_status_t reserve(const char* op, loom_tstring_t* str,
                             size_t capacity) {
  // SMALL capacity needs nothing: a VIEW or OFFSET string becomes SMALL
  // when it is next written.
  if (capacity <= LOOM_TSTRING_SMALL_CAPACITY) return loom_ok_status();
  loom_tstring_type_t type = loom_tstring_type(str);
  if (type == LOOM_TSTRING_LARGE && capacity <= str->u.large.capacity) {
    return loom_ok_status();
  }
  LOOM_RETURN_IF_ERROR(check_encodable(op, "capacity", capacity));
  size_t size = loom_tstring_size(str);
  size_t new_capacity = large_capacity_for(capacity > size ? capacity : size);
  if (type == LOOM_TSTRING_LARGE) {
    char* heap = heap_reallocate(str->u.large.ptr, new_capacity + 1);
    if (!heap) return out_of_memory(op, capacity, new_capacity);
    str->u.large.ptr = heap;
  } else {
    char* heap = heap_allocate(new_capacity + 1);
    if (!heap) return out_of_memory(op, capacity, new_capacity);
    memcpy(heap, loom_tstring_data(str), size);
    heap[size] = '\0';
    str->u.large.size = encode_size(size, LOOM_TSTRING_LARGE);
    str->u.large.ptr = heap;
  }
  str->u.large.capacity = new_capacity;
  return loom_ok_status();
}

// Grows to at least twice the capacity, as appending does.
static loom_status_t reserve_amortized(const char* op, loom_tstring_t* str,
                                       size_t capacity) {
  size_t current = loom_tstring_capacity(str);
  if (capacity <= current) return loom_ok_status();
  // Capacities stay below SIZE_MAX / 4: doubling cannot overflow.
  return reserve(op, str, capacity > 2 * current ? capacity : 2 * current);
}

loom_status_t loom_tstring_resize_uninitialized(loom_tstring_t* str,
                                                size_t new_size,
                                                char** out_data) {
  static const char kName[] = "loom_tstring_resize_uninitialized";
  if (!str) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s: str is NULL",
                            kName);
  }
  return resize(kName, str, new_size, out_data);
}

loom_status_t loom_tstring_reserve(loom_tstring_t* str, size_t capacity) {
  static const char kName[] = "loom_tstring_reserve";
  if (!str) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s: str is NULL",
                            kName);
  }
  return reserve(kName, str, capacity);
}

loom_status_t loom_tstring_reserve_amortized(loom_tstring_t* str,
                                             size_t capacity) {
  static const char kName[] = "loom_tstring_reserve_amortized";
  if (!str) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s: str is NULL",
                            kName);
  }
  return reserve_amortized(kName, str, capacity);
}

//===----------------------------------------------------------------------===//
// Copies, views, appends, assignment
//===----------------------------------------------------------------------===//

// Whether [data, data + size) lies in memory the string owns (SMALL bytes
// or a LARGE block), which resizing may free or overwrite.
static bool in_owned_bytes(const loom_tstring_t* str, const char* data,
                           size_t size) {
  loom_tstring_type_t type = loom_tstring_type(str);
  if (!data || (type != LOOM_TSTRING_SMALL && type != LOOM_TSTRING_LARGE)) {
    return false;
  }
  uintptr_t begin = (uintptr_t)loom_tstring_data(str);
  uintptr_t end = begin + loom_tstring_capacity(str) + 1;
  return (uintptr_t)data >= begin && (uintptr_t)data <= end &&
         size <= end - (uintptr_t)data;
}

loom_status_t loom_tstring_copy(loom_tstring_t* str, const char* data,
                                size_t size) {
  static const char kName[] = "loom_tstring_copy";
  if (!str || (!data && size)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s: %s is NULL",
                            kName, !str ? "str" : "data");
  }
  char* dst = NULL;
  if (in_owned_bytes(str, data, size)) {
    // Copy into a fresh string first: resizing may free `data`.
    loom_tstring_t copy;
    loom_tstring_initialize(&copy);
    LOOM_RETURN_IF_ERROR(resize(kName, &copy, size, &dst));
    if (size) memcpy(dst, data, size);
    loom_tstring_deinitialize(str);
    *str = copy;
    return loom_ok_status();
  }
  // In place, as ctstring does, so the capacity comes out the same.
  LOOM_RETURN_IF_ERROR(resize(kName, str, size, &dst));
  if (size) memcpy(dst, data, size);
  return loom_ok_status();
}

void loom_tstring_assign_view(loom_tstring_t* str, const char* data,
                              size_t size) {
  if (!str) return;
  loom_tstring_deinitialize(str);
  str->u.view.size = encode_size(size, LOOM_TSTRING_VIEW);
  str->u.view.ptr = data;
}

loom_status_t loom_tstring_append(loom_tstring_t* str, const char* data,
                                  size_t size) {
  static const char kName[] = "loom_tstring_append";
  if (!str || (!data && size)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s: %s is NULL",
                            kName, !str ? "str" : "data");
  }
  if (size == 0) return loom_ok_status();
  size_t old_size = loom_tstring_size(str);
  if (size > kMaxSize - old_size) {
    return loom_make_status(
        LOOM_STATUS_RESOURCE_EXHAUSTED,
        "%s: size: appending %zu bytes to %zu overflows a string (at most %zu)",
        kName, size, old_size, kMaxSize);
  }
  // `data` may be the string's own bytes (appending a string to itself),
  // which growing moves: find them again after the resize, which keeps the
  // first old_size bytes.
  const char* old_data = loom_tstring_data(str);
  bool aliases = (uintptr_t)data >= (uintptr_t)old_data &&
                 (uintptr_t)data - (uintptr_t)old_data <= old_size &&
                 size <= old_size - ((uintptr_t)data - (uintptr_t)old_data);
  size_t alias_offset = aliases ? (size_t)(data - old_data) : 0;
  // Amortised growth first; the resize then never allocates, so a failure
  // leaves the string as it was.
  size_t new_size = old_size + size;
  LOOM_RETURN_IF_ERROR(reserve_amortized(kName, str, new_size));
  char* dst = NULL;
  LOOM_RETURN_IF_ERROR(resize(kName, str, new_size, &dst));
  if (aliases) data = dst + alias_offset;
  memcpy(dst + old_size, data, size);
  return loom_ok_status();
}

loom_status_t loom_tstring_assign(loom_tstring_t* dst,
                                  const loom_tstring_t* src) {
  static const char kName[] = "loom_tstring_assign";
  if (!dst || !src) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s: %s is NULL",
                            kName, !dst ? "dst" : "src");
  }
  if (dst == src) return loom_ok_status();
  switch (loom_tstring_type(src)) {
    case LOOM_TSTRING_SMALL:
    case LOOM_TSTRING_VIEW:
      loom_tstring_deinitialize(dst);
      *dst = *src;
      return loom_ok_status();
    case LOOM_TSTRING_OFFSET:
      loom_tstring_assign_view(dst, loom_tstring_data(src),
                               loom_tstring_size(src));
      return loom_ok_status();
    case LOOM_TSTRING_LARGE:
    default: {
      // A fresh copy (what ctstring makes of an emptied dst), built before
      // dst is freed so a failure leaves dst as it was.
      loom_tstring_t copy;
      loom_tstring_initialize(&copy);
      char* bytes = NULL;
      size_t size = loom_tstring_size(src);
      LOOM_RETURN_IF_ERROR(resize(kName, &copy, size, &bytes));
      memcpy(bytes, loom_tstring_data(src), size);
      loom_tstring_deinitialize(dst);
      *dst = copy;
      return loom_ok_status();
    }
  }
}

void loom_tstring_move(loom_tstring_t* dst, loom_tstring_t* src) {
  if (!dst || !src || dst == src) return;
  if (loom_tstring_type(src) == LOOM_TSTRING_OFFSET) {
    loom_tstring_assign_view(dst, loom_tstring_data(src),
                             loom_tstring_size(src));
    return;
  }
  loom_tstring_deinitialize(dst);
  *dst = *src;
  if (loom_tstring_type(src) == LOOM_TSTRING_LARGE) {
    loom_tstring_initialize(src);
  }
}
