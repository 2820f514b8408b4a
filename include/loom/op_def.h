// Op definitions: the signature of an op (inputs, outputs, attributes,
// properties, shape function), built from TensorFlow's spec mini-language
// and kept in a loom_op_registry_t.
//
//   loom_op_def_builder_t* b;
//   LOOM_RETURN_IF_ERROR(loom_op_def_builder_create(allocator, "Bitcast", &b));
//   loom_op_def_builder_add_input(b, "input: T");            // each returns a
//   loom_op_def_builder_add_output(b, "output: type");       // status naming
//   loom_op_def_builder_add_attr(b, "T: {float, int32}");    // what is wrong
//   loom_op_def_builder_add_attr(b, "type: {float, int32}");
//   LOOM_RETURN_IF_ERROR(loom_op_registry_register(registry, b));  // consumes
//
// Attribute specs: `name: type [>= min] [= default]` with type one of
// string, int, float, bool, type, shape, tensor, func, list(<type>), an
// allowed set of types `{float, int32}` or of strings `{"a", 'b'}`, or the
// groups numbertype, realnumbertype, quantizedtype (also inside sets and
// lists). Defaults use TensorFlow's text form (3, 1e-3, true, "s", DT_FLOAT,
// [1, 2], { dim { size: 2 } }, ...).
//
// Argument specs: `name: T` (a type attr), `name: float` (a fixed type),
// `name: N * T` (an int attr times a type), `name: list_attr` (a list(type)
// attr), or any of these wrapped in Ref(...). An int attr used as a length
// and a list(type) attr used by an argument get a minimum of 1 unless they
// declare one; a `resource` argument makes the op stateful.

#ifndef LOOM_OP_DEF_H_
#define LOOM_OP_DEF_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loom/allocator.h"
#include "loom/attr_value.h"
#include "loom/dtype.h"
#include "loom/macros.h"
#include "loom/op_attrs.h"
#include "loom/status.h"
#include "loom/tensor_metadata.h"

LOOM_EXTERN_C_BEGIN

typedef struct loom_shape_inference_context_t loom_shape_inference_context_t;

// A shape function (TFRT's metadata function): reads input shapes and
// attributes through `context`, sets the output shapes, returns an error for
// invalid ones. Runs synchronously, before any kernel.
typedef loom_status_t (*loom_shape_fn_t)(
    loom_shape_inference_context_t* context, void* user_data);

// A metadata function: the fast form of a shape function for ops whose
// output shapes follow from the input shapes alone (element-wise ops,
// broadcasts). Given fully known input metadata, it writes the output
// shapes and returns true; it returns false when it cannot decide (an
// unknown dimension, shapes the op rejects), and the shape function then
// runs and reports any error. No context, no allocation: what Execute
// calls per op.
typedef bool (*loom_metadata_fn_t)(const loom_tensor_metadata_t* inputs,
                                   int32_t num_inputs,
                                   loom_tensor_metadata_t* outputs,
                                   int32_t num_outputs);

typedef struct loom_arg_def_t {
  const char* name;
  // Exactly one of `dtype` (fixed, not LOOM_DTYPE_INVALID), `type_attr` and
  // `type_list_attr` describes the element type(s).
  loom_dtype_t dtype;
  const char* type_attr;       // "T", or NULL
  const char* type_list_attr;  // a list(type) attr: one tensor per entry
  const char* number_attr;     // "N" for `N * T`, or NULL
  bool is_ref;
  const char* spec;  // the spec it was parsed from
} loom_arg_def_t;

typedef struct loom_attr_def_t {
  const char* name;
  loom_attr_kind_t kind;  // BOOL, I64, F32, DTYPE, SHAPE, STRING, TENSOR, FUNC
  bool is_list;
  bool has_minimum;
  int64_t minimum;  // a minimum value (int) or length (lists)
  bool has_default;
  // Allowed values; none means any. For DTYPE kinds, the allowed types; for
  // STRING kinds, the allowed strings.
  const loom_dtype_t* allowed_types;
  int32_t num_allowed_types;
  const loom_string_view_t* allowed_strings;
  int32_t num_allowed_strings;
  const char* spec;
} loom_attr_def_t;

typedef struct loom_op_def_t {
  const char* name;
  const loom_arg_def_t* inputs;
  int32_t num_inputs;
  const loom_arg_def_t* outputs;
  int32_t num_outputs;
  const loom_attr_def_t* attrs;
  int32_t num_attrs;
  // The default values of the attrs that have one, keyed by attr name
  // (frozen).
  const loom_op_attrs_t* defaults;
  bool is_commutative;
  bool is_aggregate;
  bool is_stateful;
  bool allows_uninitialized_input;
  int32_t deprecation_version;  // 0: not deprecated
  const char* deprecation_explanation;
  loom_shape_fn_t shape_fn;  // may be NULL (outputs of unknown shape)
  void* shape_fn_user_data;
  loom_metadata_fn_t metadata_fn;  // may be NULL: the shape function alone
} loom_op_def_t;

typedef struct loom_op_def_builder_t loom_op_def_builder_t;

// Starts a definition for op `name` ([A-Z][A-Za-z0-9_.]* as TensorFlow, or a
// dialect-prefixed name such as "tfrt_test.add").
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_op_def_builder_create(loom_allocator_t allocator, const char* name,
                           loom_op_def_builder_t** out_builder);

// Frees a builder that was not registered.
LOOM_API void loom_op_def_builder_destroy(loom_op_def_builder_t* builder);

// Parse one spec each. INVALID_ARGUMENT quoting the spec and the column of
// the problem; the builder is unchanged then.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_op_def_builder_add_input(loom_op_def_builder_t* builder, const char* spec);
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_op_def_builder_add_output(
    loom_op_def_builder_t* builder, const char* spec);
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_op_def_builder_add_attr(loom_op_def_builder_t* builder, const char* spec);

LOOM_API void loom_op_def_builder_set_is_commutative(
    loom_op_def_builder_t* builder, bool value);
LOOM_API void loom_op_def_builder_set_is_aggregate(
    loom_op_def_builder_t* builder, bool value);
LOOM_API void loom_op_def_builder_set_is_stateful(
    loom_op_def_builder_t* builder, bool value);
LOOM_API void loom_op_def_builder_set_allows_uninitialized_input(
    loom_op_def_builder_t* builder, bool value);
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_op_def_builder_set_deprecated(
    loom_op_def_builder_t* builder, int version, const char* explanation);
LOOM_API void loom_op_def_builder_set_shape_fn(loom_op_def_builder_t* builder,
                                               loom_shape_fn_t shape_fn,
                                               void* user_data);
// A metadata function that agrees with the shape function wherever it
// returns true (see loom_metadata_fn_t); the shape function stays the
// reference and must be set too.
LOOM_API void loom_op_def_builder_set_metadata_fn(
    loom_op_def_builder_t* builder, loom_metadata_fn_t metadata_fn);

// Lookups on a definition; NULL / -1 when absent.
LOOM_API const loom_attr_def_t* loom_op_def_find_attr(const loom_op_def_t* op,
                                                      const char* name);
LOOM_API int32_t loom_op_def_find_input(const loom_op_def_t* op,
                                        const char* name);
LOOM_API int32_t loom_op_def_find_output(const loom_op_def_t* op,
                                         const char* name);

// Whether `dtype` is allowed by `attr`'s allowed types (any when it has
// none).
LOOM_API bool loom_attr_def_allows_type(const loom_attr_def_t* attr,
                                        loom_dtype_t dtype);

// Checks a value against `attr`: kind, list-ness, minimum, allowed values.
// INVALID_ARGUMENT naming the op, the attr and the offending value.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_attr_def_check_value(const loom_op_def_t* op, const loom_attr_def_t* attr,
                          const loom_attr_value_t* value);

//===----------------------------------------------------------------------===//
// Registry
//===----------------------------------------------------------------------===//

typedef struct loom_op_registry_t loom_op_registry_t;

// The process-wide registry that TensorFlow's TF_RegisterOpDefinition and
// plugins use.
LOOM_API loom_op_registry_t* loom_op_registry_global(void);

// An independent registry (tests, sandboxes).
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_op_registry_create(
    loom_allocator_t allocator, loom_op_registry_t** out_registry);
LOOM_API void loom_op_registry_destroy(loom_op_registry_t* registry);

// Validates the definition (attrs referenced by arguments exist with the
// right types, defaults match their attrs, no duplicate names) and adds it.
// Always consumes `builder`. ALREADY_EXISTS for a name registered before;
// INVALID_ARGUMENT quoting the offending spec. Thread-safe.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_op_registry_register(
    loom_op_registry_t* registry, loom_op_def_builder_t* builder);

// The definition of `name`, valid as long as the registry; NOT_FOUND
// ("Op type not registered 'X'") when there is none. Thread-safe.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_op_registry_lookup(loom_op_registry_t* registry, const char* name,
                        const loom_op_def_t** out_op);

// As lookup, returning NULL rather than a status.
LOOM_API const loom_op_def_t* loom_op_registry_find(
    loom_op_registry_t* registry, const char* name);

// Number of registered ops, and their names in sorted order: writes up to
// `capacity` names and returns the total count.
LOOM_API size_t loom_op_registry_list(loom_op_registry_t* registry,
                                      const char** names, size_t capacity);

// Removes an op (used to roll back a failed plugin). Its definition stays
// allocated until the registry is destroyed, so pointers handed out stay
// valid. NOT_FOUND when absent.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_op_registry_unregister(loom_op_registry_t* registry, const char* name);

LOOM_EXTERN_C_END

#endif  // LOOM_OP_DEF_H_
