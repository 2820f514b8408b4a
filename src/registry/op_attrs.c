// Op attribute sets: entries sorted by name over one byte buffer holding
// names and encoded values (attr_encoding.h), inline until they spill.
// A frozen set is one heap block: the struct, its entries, its bytes.

#include "loom/op_attrs.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/text.h"
#include "registry/attr_encoding.h"

static loom_op_attrs_entry_t* entries(const loom_op_attrs_t* attrs) {
  return attrs->heap_entries ? attrs->heap_entries
                             : (loom_op_attrs_entry_t*)attrs->inline_entries;
}

static unsigned char* bytes(const loom_op_attrs_t* attrs) {
  return attrs->heap_bytes ? attrs->heap_bytes
                           : (unsigned char*)attrs->inline_bytes;
}

static const char* entry_name(const loom_op_attrs_t* attrs,
                              const loom_op_attrs_entry_t* entry) {
  return (const char*)bytes(attrs) + entry->name_offset;
}

void loom_op_attrs_initialize(loom_op_attrs_t* attrs,
                              loom_allocator_t allocator) {
  memset(attrs, 0, offsetof(loom_op_attrs_t, inline_entries));
  attrs->allocator = allocator;
  attrs->entries_capacity = LOOM_OP_ATTRS_INLINE_ENTRIES;
  attrs->bytes_capacity = LOOM_OP_ATTRS_INLINE_BYTES;
}

static void release_tensor(loom_tensor_t* tensor) {
  loom_tensor_release(tensor);
}

static void retain_tensor(loom_tensor_t* tensor) {
  loom_tensor_retain(tensor);
}

static void for_each_tensor(const loom_op_attrs_t* attrs,
                            const loom_op_attrs_entry_t* entry,
                            void (*fn)(loom_tensor_t*)) {
  loom__attr_for_each_tensor((loom_attr_kind_t)entry->kind, entry->is_list,
                             entry->count, bytes(attrs) + entry->value_offset,
                             fn);
}

static void release_all_tensors(const loom_op_attrs_t* attrs) {
  for (uint32_t i = 0; i < attrs->num_entries; ++i) {
    for_each_tensor(attrs, &entries(attrs)[i], release_tensor);
  }
}

void loom_op_attrs_reset(loom_op_attrs_t* attrs) {
  if (!attrs || attrs->frozen_ref_count) return;
  // An eager op is reset before every execution, mostly with no attrs.
  if (attrs->num_entries) release_all_tensors(attrs);
  attrs->num_entries = 0;
  attrs->bytes_used = 0;
}

void loom_op_attrs_deinitialize(loom_op_attrs_t* attrs) {
  if (!attrs || attrs->frozen_ref_count) return;
  release_all_tensors(attrs);
  loom_allocator_free(attrs->allocator, attrs->heap_entries);
  loom_allocator_free(attrs->allocator, attrs->heap_bytes);
  loom_op_attrs_initialize(attrs, attrs->allocator);
}

bool loom_op_attrs_is_inline(const loom_op_attrs_t* attrs) {
  return !attrs->heap_entries && !attrs->heap_bytes;
}

bool loom_op_attrs_is_frozen(const loom_op_attrs_t* attrs) {
  return attrs && attrs->frozen_ref_count != 0;
}

size_t loom_op_attrs_count(const loom_op_attrs_t* attrs) {
  return attrs ? attrs->num_entries : 0;
}

// Binary search: the index of `name`, or -(insertion point) - 1.
static int64_t find(const loom_op_attrs_t* attrs, const char* name) {
  int64_t low = 0, high = (int64_t)attrs->num_entries - 1;
  const loom_op_attrs_entry_t* all = entries(attrs);
  while (low <= high) {
    int64_t mid = (low + high) / 2;
    int order = strcmp(entry_name(attrs, &all[mid]), name);
    if (order == 0) return mid;
    if (order < 0) {
      low = mid + 1;
    } else {
      high = mid - 1;
    }
  }
  return -low - 1;
}

// Makes room for one more entry and `extra_bytes` more bytes. On failure the
// set is unchanged. Replaced heap buffers are handed back in *out_stale (two
// slots) rather than freed: a value being set may still point into them.
static loom_status_t reserve(loom_op_attrs_t* attrs, size_t extra_bytes,
                             void* out_stale[2]) {
  out_stale[0] = out_stale[1] = NULL;
  size_t needed_bytes = (size_t)attrs->bytes_used + extra_bytes;
  if (extra_bytes > UINT32_MAX / 2 || needed_bytes > UINT32_MAX / 2) {
    return loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                            "op attributes exceed 2 GiB");
  }
  loom_op_attrs_entry_t* new_entries = NULL;
  uint32_t new_entries_capacity = attrs->entries_capacity;
  if (attrs->num_entries + 1 > attrs->entries_capacity) {
    new_entries_capacity = attrs->entries_capacity * 2;
    LOOM_RETURN_IF_ERROR(loom_allocator_malloc(
        attrs->allocator, sizeof(loom_op_attrs_entry_t) * new_entries_capacity,
        (void**)&new_entries));
  }
  unsigned char* new_bytes = NULL;
  uint32_t new_bytes_capacity = attrs->bytes_capacity;
  if (needed_bytes > attrs->bytes_capacity) {
    while (new_bytes_capacity < needed_bytes) new_bytes_capacity *= 2;
    loom_status_t status = loom_allocator_malloc_aligned(
        attrs->allocator, new_bytes_capacity, 16, (void**)&new_bytes);
    if (status) {
      loom_allocator_free(attrs->allocator, new_entries);
      return status;
    }
  }
  if (new_entries) {
    memcpy(new_entries, entries(attrs),
           sizeof(loom_op_attrs_entry_t) * attrs->num_entries);
    out_stale[0] = attrs->heap_entries;
    attrs->heap_entries = new_entries;
    attrs->entries_capacity = new_entries_capacity;
  }
  if (new_bytes) {
    memcpy(new_bytes, bytes(attrs), attrs->bytes_used);
    out_stale[1] = attrs->heap_bytes;
    attrs->heap_bytes = new_bytes;
    attrs->bytes_capacity = new_bytes_capacity;
  }
  return loom_ok_status();
}

static void remove_at(loom_op_attrs_t* attrs, int64_t index) {
  loom_op_attrs_entry_t* all = entries(attrs);
  for_each_tensor(attrs, &all[index], release_tensor);
  memmove(&all[index], &all[index + 1],
          sizeof(loom_op_attrs_entry_t) *
              (attrs->num_entries - (uint32_t)index - 1));
  attrs->num_entries--;
  // The removed entry's bytes stay as dead space until the set is reset.
}

bool loom_op_attrs_remove(loom_op_attrs_t* attrs, const char* name) {
  if (!attrs || !name || attrs->frozen_ref_count) return false;
  int64_t index = find(attrs, name);
  if (index < 0) return false;
  remove_at(attrs, index);
  return true;
}

loom_status_t loom_op_attrs_set_value(loom_op_attrs_t* attrs, const char* name,
                                      const loom_attr_value_t* value) {
  if (!attrs || !name || !value) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom__op_attrs_set: %s is NULL",
                            !attrs  ? "attrs"
                            : !name ? "name"
                                    : "value");
  }
  if (attrs->frozen_ref_count) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "cannot set attr '%s': the attribute set is frozen",
                            name);
  }
  size_t name_length = strlen(name);
  if (name_length == 0) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "an attribute name must not be empty");
  }
  size_t value_size = 0;
  loom_status_t status = loom__attr_encoded_size(value, &value_size);
  if (status) return loom_status_annotate(status, "attr '%s'", name);

  size_t name_offset = attrs->bytes_used;
  size_t value_offset = loom__align8(name_offset + name_length + 1);
  size_t end = value_offset + value_size;
  void* stale[2];
  LOOM_RETURN_IF_ERROR(reserve(attrs, end - attrs->bytes_used, stale));

  // Encode first (the value may be a view into this very set), then replace.
  unsigned char* base = bytes(attrs);
  memcpy(base + name_offset, name, name_length + 1);
  memset(base + name_offset + name_length + 1, 0,
         value_offset - (name_offset + name_length + 1));
  loom__attr_encode(value, base + value_offset);
  attrs->bytes_used = (uint32_t)end;
  loom_allocator_free(attrs->allocator, stale[0]);
  loom_allocator_free(attrs->allocator, stale[1]);

  int64_t index = find(attrs, name);
  if (index >= 0) {
    remove_at(attrs, index);
    index = find(attrs, name);
  }
  int64_t insert_at = -index - 1;
  loom_op_attrs_entry_t* all = entries(attrs);
  memmove(&all[insert_at + 1], &all[insert_at],
          sizeof(loom_op_attrs_entry_t) *
              (attrs->num_entries - (uint32_t)insert_at));
  loom_op_attrs_entry_t* entry = &all[insert_at];
  entry->name_offset = (uint32_t)name_offset;
  entry->value_offset = (uint32_t)value_offset;
  entry->value_size = (uint32_t)value_size;
  entry->kind = (uint8_t)value->kind;
  entry->is_list = value->is_list ? 1 : 0;
  entry->count = value->is_list ? value->count : 1;
  attrs->num_entries++;
  return loom_ok_status();
}

static loom_status_t set_scalar(loom_op_attrs_t* attrs, const char* name,
                                loom_attr_value_t value) {
  value.is_list = false;
  value.count = 1;
  return loom_op_attrs_set_value(attrs, name, &value);
}

#define DEFINE_SCALAR_SETTER(suffix, c_type, kind_value, field)              \
  loom_status_t loom_op_attrs_set_##suffix(loom_op_attrs_t* attrs,           \
                                           const char* name, c_type value) { \
    loom_attr_value_t view;                                                  \
    memset(&view, 0, sizeof(view));                                          \
    view.kind = kind_value;                                                  \
    view.u.field = value;                                                    \
    return set_scalar(attrs, name, view);                                    \
  }

DEFINE_SCALAR_SETTER(bool, bool, LOOM_ATTR_KIND_BOOL, b)
DEFINE_SCALAR_SETTER(i32, int32_t, LOOM_ATTR_KIND_I32, i32)
DEFINE_SCALAR_SETTER(i64, int64_t, LOOM_ATTR_KIND_I64, i64)
DEFINE_SCALAR_SETTER(f32, float, LOOM_ATTR_KIND_F32, f32)
DEFINE_SCALAR_SETTER(f64, double, LOOM_ATTR_KIND_F64, f64)
DEFINE_SCALAR_SETTER(dtype, loom_dtype_t, LOOM_ATTR_KIND_DTYPE, dtype)
DEFINE_SCALAR_SETTER(tensor, loom_tensor_t*, LOOM_ATTR_KIND_TENSOR, tensor)

#undef DEFINE_SCALAR_SETTER

loom_status_t loom_op_attrs_set_shape(loom_op_attrs_t* attrs, const char* name,
                                      const int64_t* dims, int32_t rank) {
  if (rank > LOOM_MAX_SHAPE_RANK) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "attr '%s': shape rank %d exceeds %d",
                            name ? name : "?", rank, LOOM_MAX_SHAPE_RANK);
  }
  loom_attr_value_t view;
  memset(&view, 0, sizeof(view));
  view.kind = LOOM_ATTR_KIND_SHAPE;
  view.u.shape.rank = rank;
  view.u.shape.dims = dims;
  return set_scalar(attrs, name, view);
}

static loom_status_t set_bytes(loom_op_attrs_t* attrs, const char* name,
                               loom_attr_kind_t kind, const char* data,
                               size_t size) {
  loom_attr_value_t view;
  memset(&view, 0, sizeof(view));
  view.kind = kind;
  view.u.string.data = data;
  view.u.string.size = size;
  return set_scalar(attrs, name, view);
}

loom_status_t loom_op_attrs_set_string(loom_op_attrs_t* attrs, const char* name,
                                       const char* data, size_t size) {
  return set_bytes(attrs, name, LOOM_ATTR_KIND_STRING, data, size);
}

loom_status_t loom_op_attrs_set_func(loom_op_attrs_t* attrs, const char* name,
                                     const char* function_name, size_t size) {
  return set_bytes(attrs, name, LOOM_ATTR_KIND_FUNC, function_name, size);
}

static loom_status_t set_list(loom_op_attrs_t* attrs, const char* name,
                              loom_attr_kind_t kind, const void* values,
                              int64_t count) {
  loom_attr_value_t view;
  memset(&view, 0, sizeof(view));
  view.kind = kind;
  view.is_list = true;
  view.count = count;
  view.u.list = values;
  return loom_op_attrs_set_value(attrs, name, &view);
}

loom_status_t loom_op_attrs_set_list(loom_op_attrs_t* attrs, const char* name,
                                     loom_attr_kind_t kind, const void* values,
                                     int64_t count) {
  if (loom__attr_array_element_size(kind) == 0 ||
      kind == LOOM_ATTR_KIND_TENSOR) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "loom_op_attrs_set_list: attr '%s': kind %s is not a scalar kind",
        name ? name : "?", loom_attr_kind_name(kind));
  }
  return set_list(attrs, name, kind, values, count);
}

loom_status_t loom_op_attrs_set_string_list(loom_op_attrs_t* attrs,
                                            const char* name,
                                            const loom_string_view_t* values,
                                            int64_t count) {
  return set_list(attrs, name, LOOM_ATTR_KIND_STRING, values, count);
}

loom_status_t loom_op_attrs_set_shape_list(loom_op_attrs_t* attrs,
                                           const char* name,
                                           const loom_shape_t* values,
                                           int64_t count) {
  return set_list(attrs, name, LOOM_ATTR_KIND_SHAPE, values, count);
}

loom_status_t loom_op_attrs_set_tensor_list(loom_op_attrs_t* attrs,
                                            const char* name,
                                            loom_tensor_t* const* values,
                                            int64_t count) {
  return set_list(attrs, name, LOOM_ATTR_KIND_TENSOR, values, count);
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

static void view_entry(const loom_op_attrs_t* attrs,
                       const loom_op_attrs_entry_t* entry,
                       loom_attr_value_t* out) {
  loom__attr_decode((loom_attr_kind_t)entry->kind, entry->is_list, entry->count,
                    bytes(attrs) + entry->value_offset, entry->value_size, out);
}

bool loom_op_attrs_get(const loom_op_attrs_t* attrs, const char* name,
                       loom_attr_value_t* out_value) {
  if (!attrs || !name) return false;
  int64_t index = find(attrs, name);
  if (index < 0) return false;
  if (out_value) view_entry(attrs, &entries(attrs)[index], out_value);
  return true;
}

bool loom_op_attrs_entry_at(const loom_op_attrs_t* attrs, size_t index,
                            const char** out_name,
                            loom_attr_value_t* out_value) {
  if (!attrs || index >= attrs->num_entries) return false;
  const loom_op_attrs_entry_t* entry = &entries(attrs)[index];
  if (out_name) *out_name = entry_name(attrs, entry);
  if (out_value) view_entry(attrs, entry, out_value);
  return true;
}

// Kinds whose encoding is their C value, every byte written: equal values
// are equal bytes.
static bool plain_scalar(const loom_op_attrs_entry_t* entry) {
  if (entry->is_list) return false;
  switch ((loom_attr_kind_t)entry->kind) {
    case LOOM_ATTR_KIND_BOOL:
    case LOOM_ATTR_KIND_I32:
    case LOOM_ATTR_KIND_I64:
    case LOOM_ATTR_KIND_F32:
    case LOOM_ATTR_KIND_F64:
    case LOOM_ATTR_KIND_DTYPE:
      return true;
    default:
      return false;
  }
}

// Sets built by the same calls in the same order (an op's attributes and
// the frozen copy a kernel was chosen for) have the same entries over the
// same bytes: equal without decoding. Any difference says nothing; the
// caller then compares values. Every byte below bytes_used has been
// written (the pad before each value is zeroed, encoders fill their whole
// size), so no uninitialised byte is compared.
static bool same_layout(const loom_op_attrs_t* a,
                        const loom_op_attrs_entry_t* entries_a,
                        const loom_op_attrs_t* b,
                        const loom_op_attrs_entry_t* entries_b, size_t count) {
  if (a->bytes_used != b->bytes_used) return false;
  for (size_t i = 0; i < count; ++i) {
    const loom_op_attrs_entry_t* x = &entries_a[i];
    const loom_op_attrs_entry_t* y = &entries_b[i];
    if (x->name_offset != y->name_offset ||
        x->value_offset != y->value_offset || x->value_size != y->value_size ||
        x->kind != y->kind || x->is_list != y->is_list ||
        x->count != y->count) {
      return false;
    }
  }
  return memcmp(bytes(a), bytes(b), a->bytes_used) == 0;
}

bool loom_op_attrs_equal(const loom_op_attrs_t* a, const loom_op_attrs_t* b) {
  size_t count = loom_op_attrs_count(a);
  if (count != loom_op_attrs_count(b)) return false;
  if (count == 0) return true;
  // Entries are kept in name order, so equal sets match entry by entry.
  // Kernel look-ups compare a few plain scalars (a dtype) on every op:
  // those are compared as bytes, the rest as values.
  const loom_op_attrs_entry_t* entries_a = entries(a);
  const loom_op_attrs_entry_t* entries_b = entries(b);
  if (same_layout(a, entries_a, b, entries_b, count)) return true;
  for (size_t i = 0; i < count; ++i) {
    const loom_op_attrs_entry_t* x = &entries_a[i];
    const loom_op_attrs_entry_t* y = &entries_b[i];
    if (x->kind != y->kind || x->is_list != y->is_list ||
        strcmp(entry_name(a, x), entry_name(b, y)) != 0) {
      return false;
    }
    if (plain_scalar(x)) {
      if (x->value_size != y->value_size ||
          memcmp(bytes(a) + x->value_offset, bytes(b) + y->value_offset,
                 x->value_size) != 0) {
        return false;
      }
      continue;
    }
    loom_attr_value_t value_a, value_b;
    view_entry(a, x, &value_a);
    view_entry(b, y, &value_b);
    if (!loom_attr_value_equal(&value_a, &value_b)) return false;
  }
  return true;
}

loom_status_t loom_op_attrs_merge(loom_op_attrs_t* destination,
                                  const loom_op_attrs_t* source) {
  if (!destination) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_op_attrs_merge: destination is NULL");
  }
  for (size_t i = 0; i < loom_op_attrs_count(source); ++i) {
    const char* name = NULL;
    loom_attr_value_t value;
    loom_op_attrs_entry_at(source, i, &name, &value);
    LOOM_RETURN_IF_ERROR(loom_op_attrs_set_value(destination, name, &value));
  }
  return loom_ok_status();
}

static const char* kind_text(const loom_attr_value_t* value, char* buffer,
                             size_t size) {
  snprintf(buffer, size, value->is_list ? "list(%s)" : "%s",
           loom_attr_kind_name(value->kind));
  return buffer;
}

// Finds `name` for a typed read: NOT_FOUND or the value.
static loom_status_t get_for_read(const loom_op_attrs_t* attrs,
                                  const char* name, void* out,
                                  loom_attr_value_t* value) {
  if (!attrs || !name || !out) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_op_attrs_get: %s is NULL",
                            !attrs  ? "attrs"
                            : !name ? "name"
                                    : "out_value");
  }
  if (!loom_op_attrs_get(attrs, name, value)) {
    return loom_make_status(LOOM_STATUS_NOT_FOUND, "attr '%s' not found", name);
  }
  return loom_ok_status();
}

static loom_status_t wrong_kind(const char* name,
                                const loom_attr_value_t* value,
                                const char* expected) {
  char text[32];
  return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                          "attr '%s' has type %s, expected %s", name,
                          kind_text(value, text, sizeof(text)), expected);
}

loom_status_t loom_op_attrs_get_i64(const loom_op_attrs_t* attrs,
                                    const char* name, int64_t* out_value) {
  loom_attr_value_t value;
  LOOM_RETURN_IF_ERROR(get_for_read(attrs, name, out_value, &value));
  if (!value.is_list && value.kind == LOOM_ATTR_KIND_I64) {
    *out_value = value.u.i64;
  } else if (!value.is_list && value.kind == LOOM_ATTR_KIND_I32) {
    *out_value = value.u.i32;
  } else {
    return wrong_kind(name, &value, "int");
  }
  return loom_ok_status();
}

loom_status_t loom_op_attrs_get_f32(const loom_op_attrs_t* attrs,
                                    const char* name, float* out_value) {
  loom_attr_value_t value;
  LOOM_RETURN_IF_ERROR(get_for_read(attrs, name, out_value, &value));
  if (!value.is_list && value.kind == LOOM_ATTR_KIND_F32) {
    *out_value = value.u.f32;
  } else if (!value.is_list && value.kind == LOOM_ATTR_KIND_F64) {
    *out_value = (float)value.u.f64;
  } else {
    return wrong_kind(name, &value, "float");
  }
  return loom_ok_status();
}

loom_status_t loom_op_attrs_get_bool(const loom_op_attrs_t* attrs,
                                     const char* name, bool* out_value) {
  loom_attr_value_t value;
  LOOM_RETURN_IF_ERROR(get_for_read(attrs, name, out_value, &value));
  if (value.is_list || value.kind != LOOM_ATTR_KIND_BOOL) {
    return wrong_kind(name, &value, "bool");
  }
  *out_value = value.u.b;
  return loom_ok_status();
}

loom_status_t loom_op_attrs_get_dtype(const loom_op_attrs_t* attrs,
                                      const char* name,
                                      loom_dtype_t* out_value) {
  loom_attr_value_t value;
  LOOM_RETURN_IF_ERROR(get_for_read(attrs, name, out_value, &value));
  if (value.is_list || value.kind != LOOM_ATTR_KIND_DTYPE) {
    return wrong_kind(name, &value, "type");
  }
  *out_value = value.u.dtype;
  return loom_ok_status();
}

//===----------------------------------------------------------------------===//
// Freezing
//===----------------------------------------------------------------------===//

loom_status_t loom_op_attrs_freeze(const loom_op_attrs_t* attrs,
                                   const loom_op_attrs_t** out_frozen) {
  if (!attrs || !out_frozen) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_op_attrs_freeze: %s is NULL",
                            !attrs ? "attrs" : "out_frozen");
  }
  *out_frozen = NULL;
  if (attrs->frozen_ref_count) {
    loom_op_attrs_retain(attrs);
    *out_frozen = attrs;
    return loom_ok_status();
  }
  size_t header = loom__align8(sizeof(loom_op_attrs_t));
  size_t entries_size = sizeof(loom_op_attrs_entry_t) * attrs->num_entries;
  size_t bytes_offset = (header + entries_size + 15) & ~(size_t)15;
  loom_op_attrs_t* frozen = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_malloc_aligned(
      attrs->allocator, bytes_offset + attrs->bytes_used + 1, 16,
      (void**)&frozen));
  loom_op_attrs_initialize(frozen, attrs->allocator);
  frozen->heap_entries = (loom_op_attrs_entry_t*)((char*)frozen + header);
  frozen->heap_bytes = (unsigned char*)frozen + bytes_offset;
  memcpy(frozen->heap_entries, entries(attrs), entries_size);
  memcpy(frozen->heap_bytes, bytes(attrs), attrs->bytes_used);
  frozen->num_entries = attrs->num_entries;
  frozen->entries_capacity = attrs->num_entries;
  frozen->bytes_used = attrs->bytes_used;
  frozen->bytes_capacity = attrs->bytes_used;
  frozen->frozen_ref_count = 1;
  for (uint32_t i = 0; i < frozen->num_entries; ++i) {
    for_each_tensor(frozen, &frozen->heap_entries[i], retain_tensor);
  }
  *out_frozen = frozen;
  return loom_ok_status();
}

void loom_op_attrs_retain(const loom_op_attrs_t* frozen) {
  if (!frozen || !frozen->frozen_ref_count) return;
  __atomic_fetch_add(&((loom_op_attrs_t*)frozen)->frozen_ref_count, 1,
                     __ATOMIC_RELAXED);
}

void loom_op_attrs_release(const loom_op_attrs_t* frozen) {
  if (!frozen || !frozen->frozen_ref_count) return;
  loom_op_attrs_t* attrs = (loom_op_attrs_t*)frozen;
  if (__atomic_fetch_sub(&attrs->frozen_ref_count, 1, __ATOMIC_ACQ_REL) != 1) {
    return;
  }
  release_all_tensors(attrs);
  loom_allocator_free(attrs->allocator, attrs);
}

//===----------------------------------------------------------------------===//
// Printing (TFRT's OpAttrsRef::Print)
//===----------------------------------------------------------------------===//

// TFRT's names for element types (OpAttrType).
static const char* tfrt_dtype_name(loom_dtype_t dtype) {
  switch (dtype) {
    case LOOM_DTYPE_BOOL:
      return "BOOL";
    case LOOM_DTYPE_INT8:
      return "I8";
    case LOOM_DTYPE_INT16:
      return "I16";
    case LOOM_DTYPE_INT32:
      return "I32";
    case LOOM_DTYPE_INT64:
      return "I64";
    case LOOM_DTYPE_UINT8:
      return "UI8";
    case LOOM_DTYPE_UINT16:
      return "UI16";
    case LOOM_DTYPE_UINT32:
      return "UI32";
    case LOOM_DTYPE_UINT64:
      return "UI64";
    case LOOM_DTYPE_BFLOAT16:
      return "BF16";
    case LOOM_DTYPE_HALF:
      return "F16";
    case LOOM_DTYPE_FLOAT:
      return "F32";
    case LOOM_DTYPE_DOUBLE:
      return "F64";
    case LOOM_DTYPE_COMPLEX64:
      return "COMPLEX64";
    case LOOM_DTYPE_COMPLEX128:
      return "COMPLEX128";
    case LOOM_DTYPE_STRING:
      return "CHAR";
    case LOOM_DTYPE_RESOURCE:
      return "RESOURCE";
    case LOOM_DTYPE_VARIANT:
      return "VARIANT";
    default:
      return loom_dtype_name(dtype);
  }
}

static void print_element(loom__text_t* text, const loom_attr_value_t* value);

static void print_scalar(loom__text_t* text, const loom_attr_value_t* value) {
  switch (value->kind) {
    case LOOM_ATTR_KIND_BOOL:
      loom__text_append(text, "%d", value->u.b ? 1 : 0);
      break;
    case LOOM_ATTR_KIND_I32:
      loom__text_append(text, "%" PRId32, value->u.i32);
      break;
    case LOOM_ATTR_KIND_I64:
      loom__text_append(text, "%" PRId64, value->u.i64);
      break;
    case LOOM_ATTR_KIND_F32:
      loom__text_append(text, "%e", (double)value->u.f32);
      break;
    case LOOM_ATTR_KIND_F64:
      loom__text_append(text, "%e", value->u.f64);
      break;
    case LOOM_ATTR_KIND_DTYPE:
      loom__text_append(text, "%s", tfrt_dtype_name(value->u.dtype));
      break;
    case LOOM_ATTR_KIND_SHAPE:
      loom__text_append(text, "<");
      if (value->u.shape.rank < 0) {
        loom__text_append(text, "*");
      } else {
        for (int32_t i = 0; i < value->u.shape.rank; ++i) {
          loom__text_append(text, "%s%" PRId64, i ? "x" : "",
                            value->u.shape.dims[i]);
        }
      }
      loom__text_append(text, ">");
      break;
    case LOOM_ATTR_KIND_FUNC:
      loom__text_append(text, "FUNC function_name: %.*s",
                        (int)value->u.string.size, value->u.string.data);
      break;
    case LOOM_ATTR_KIND_TENSOR: {
      const loom_shape_t* shape = loom_tensor_shape(value->u.tensor);
      loom__text_append(text, "dtype=%s, rank=%d, elt_count=%" PRId64,
                        tfrt_dtype_name(loom_tensor_dtype(value->u.tensor)),
                        shape->rank, loom_tensor_num_elements(value->u.tensor));
      break;
    }
    default:
      loom__text_append(text, "unknown");
      break;
  }
}

// Prints an array the way TFRT does: at most five elements, then "...".
static void print_array(loom__text_t* text, const loom_attr_value_t* value) {
  loom__text_append(text, "[");
  int64_t count = value->is_list ? value->count : (int64_t)value->u.string.size;
  for (int64_t i = 0; i < count; ++i) {
    if (i == 5) {
      loom__text_append(text, "...");
      break;
    }
    if (i) loom__text_append(text, ", ");
    if (!value->is_list) {  // a string: TFRT stores it as an array of chars
      loom__text_append(text, "%c", value->u.string.data[i]);
      continue;
    }
    loom_attr_value_t element;
    loom_status_ignore(loom_attr_value_list_element(value, i, &element));
    print_element(text, &element);
  }
  loom__text_append(text, "]");
}

static void print_element(loom__text_t* text, const loom_attr_value_t* value) {
  if (value->kind == LOOM_ATTR_KIND_AGGREGATE) {
    loom__text_append(text, "elt_count=%" PRId64 " [", value->count);
    for (int64_t i = 0; i < value->count; ++i) {
      loom_attr_value_t element;
      loom_status_ignore(loom_attr_value_list_element(value, i, &element));
      loom__text_append(text, "%s{", i ? ", " : "");
      print_element(text, &element);
      loom__text_append(text, "}");
    }
    loom__text_append(text, "]");
  } else if (value->is_list || value->kind == LOOM_ATTR_KIND_STRING) {
    print_array(text, value);
  } else {
    print_scalar(text, value);
  }
}

size_t loom_op_attrs_print(const loom_op_attrs_t* attrs, char* buffer,
                           size_t capacity) {
  loom__text_t text = {
      .buffer = buffer, .capacity = buffer ? capacity : 0, .length = 0};
  if (text.capacity) buffer[0] = '\0';
  size_t count = loom_op_attrs_count(attrs);
  if (count == 0) {
    loom__text_append(&text, "OpAttrs is empty\n");
    return text.length;
  }
  loom__text_append(&text, "OpAttrs contains %zu entries:\n", count);
  for (size_t i = 0; i < count; ++i) {
    const char* name = NULL;
    loom_attr_value_t value;
    loom_op_attrs_entry_at(attrs, i, &name, &value);
    loom__text_append(&text, "  '%s' type=%s value=", name,
                      loom_attr_kind_name(value.kind));
    print_element(&text, &value);
    loom__text_append(&text, "\n");
  }
  loom__text_append(&text, "\n");
  return text.length;
}
