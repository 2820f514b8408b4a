// The byte encoding of attribute values shared by loom_op_attrs_t and the
// loom_attr_value_t accessors.
//
// Every encoded value starts 8-byte aligned. Scalars of fixed size are their
// C value. A shape is int64 rank (-1: unknown) then rank int64 dims. A
// string or function name is its bytes plus a NUL. A tensor is a retained
// loom_tensor_t*. Lists of fixed-size scalars and of tensors are C arrays.
// A list of shapes is the shapes back to back, each padded to 8 bytes. A
// list of strings is uint64 offsets[count + 1] (from the value's start) then
// the NUL-terminated strings. An AGGREGATE is, per element, a 16-byte header
// {u8 kind, u8 is_list, 6 padding bytes, int64 count}, a uint64 payload
// size, then the element's own encoding padded to 8 bytes.

#ifndef LOOM_REGISTRY_ATTR_ENCODING_H_
#define LOOM_REGISTRY_ATTR_ENCODING_H_

#include <stddef.h>
#include <stdint.h>

#include "loom/attr_value.h"

enum { LOOM_ATTR_ELEMENT_HEADER_SIZE = 24 };

static inline size_t loom__align8(size_t size) {
  return (size + 7) & ~(size_t)7;
}

// Size of one element of a plain-array list (0 for kinds that are encoded
// differently).
size_t loom__attr_array_element_size(loom_attr_kind_t kind);

// Validates `value` (kind, counts, pointers) and computes its encoded size.
loom_status_t loom__attr_encoded_size(const loom_attr_value_t* value,
                                      size_t* out_size);

// Writes the encoding of `value` (validated by loom__attr_encoded_size) to
// `out`, retaining the tensors it holds.
void loom__attr_encode(const loom_attr_value_t* value, unsigned char* out);

// Makes a view of an encoded value.
void loom__attr_decode(loom_attr_kind_t kind, bool is_list, int64_t count,
                       const unsigned char* bytes, size_t size,
                       loom_attr_value_t* out_value);

// Calls fn on every tensor held by an encoded value (release, retain).
void loom__attr_for_each_tensor(loom_attr_kind_t kind, bool is_list,
                                int64_t count, const unsigned char* bytes,
                                void (*fn)(loom_tensor_t* tensor));

#endif  // LOOM_REGISTRY_ATTR_ENCODING_H_
