// Eager ops being built: the op's definition, attributes, inputs and
// device, and the prepared op of the handler it last ran on.

#include <string.h>

#include "frontend/eager_op_internal.h"
#include "loom/op_signature.h"

static void clear_inputs(loom_eager_op_t* op) {
  for (int32_t i = 0; i < op->num_inputs; ++i) {
    loom_tensor_handle_release(op->inputs[i]);
  }
  op->num_inputs = 0;
  op->num_consumed = 0;
}

void loom__eager_op_drop_prepared(loom_eager_op_t* op) {
  loom_prepared_op_release(op->prepared);
  op->prepared = NULL;
  op->prepared_handler = NULL;
  op->memo.prepared = NULL;
}

// Whether every output of `def` is one tensor (no N * T, no type lists):
// then an execution's result count is known without the attributes.
static int32_t fixed_output_count(const loom_op_def_t* def) {
  for (int32_t i = 0; i < def->num_outputs; ++i) {
    const loom_arg_def_t* arg = &def->outputs[i];
    if (arg->number_attr || arg->type_list_attr) return -1;
  }
  return def->num_outputs;
}

// Looks `op_name` up (an op, or a function of the context's library) and
// makes it the op's.
static loom_status_t resolve(loom_eager_op_t* op, const char* op_name) {
  uint64_t generation = loom__registry_generation();
  const loom_op_def_t* def = NULL;
  void* function = NULL;
  bool calls = false;
  LOOM_RETURN_IF_ERROR(
      loom__context_resolve_op(op->context, op_name, &def, &function, &calls));
  if (op->def != def || op->generation != generation) {
    loom__eager_op_drop_prepared(op);
  }
  loom__context_release_function(op->context, op->function);
  op->function = function;
  op->calls_function = calls;
  op->def = def;
  op->generation = generation;
  op->output_count = fixed_output_count(def);
  return loom_ok_status();
}

static loom_status_t set_name(loom_eager_op_t* op, const char* op_name) {
  size_t length = strlen(op_name);
  if (length >= sizeof(op->name)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "op name '%.64s...' is longer than %zu bytes",
                            op_name, sizeof(op->name) - 1);
  }
  LOOM_RETURN_IF_ERROR(resolve(op, op_name));
  memcpy(op->name, op_name, length + 1);
  return loom_ok_status();
}

loom_status_t loom__eager_op_refresh(loom_eager_op_t* op) {
  loom__eager_op_drop_prepared(op);
  if (op->function) {
    // A function's signature is its own, whatever the registries hold; the
    // op keeps calling the function it was made for.
    op->generation = loom__registry_generation();
    return loom_ok_status();
  }
  return resolve(op, op->name);
}

loom_status_t loom_eager_op_create(loom_context_t* context, const char* op_name,
                                   loom_eager_op_t** out_op) {
  if (!context || !op_name || !out_op) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_eager_op_create: %s is NULL",
                            !context   ? "context"
                            : !op_name ? "op_name"
                                       : "out_op");
  }
  *out_op = NULL;
  loom_eager_op_t* op = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_calloc(context->allocator, sizeof(*op), (void**)&op));
  op->context = context;
  op->inputs = op->inline_inputs;
  op->inputs_capacity = kEagerInlineInputs;
  loom_op_attrs_initialize(&op->attrs, context->allocator);
  loom_status_t status = set_name(op, op_name);
  if (status) {
    loom_eager_op_destroy(op);
    return status;
  }
  *out_op = op;
  return loom_ok_status();
}

void loom_eager_op_destroy(loom_eager_op_t* op) {
  if (!op) return;
  clear_inputs(op);
  loom__eager_op_drop_prepared(op);
  loom__context_release_function(op->context, op->function);
  loom_status_free(op->error);
  loom_cancellation_release(op->cancellation);
  loom_op_attrs_deinitialize(&op->attrs);
  if (op->inputs != op->inline_inputs) {
    loom_allocator_free(op->context->allocator, op->inputs);
  }
  loom_allocator_free(op->context->allocator, op);
}

// Clears inputs, attributes and the recorded error; renames when asked.
static loom_status_t reset(loom_eager_op_t* op, const char* op_name) {
  clear_inputs(op);
  loom_op_attrs_reset(&op->attrs);
  if (LOOM_UNLIKELY(op->error != NULL)) {
    loom_status_free(op->error);
    op->error = NULL;
  }
  if (LOOM_UNLIKELY(op->cancellation != NULL)) {
    loom_cancellation_release(op->cancellation);
    op->cancellation = NULL;
  }
  if (op_name && strcmp(op_name, op->name) != 0) return set_name(op, op_name);
  return loom_ok_status();
}

loom_status_t loom_eager_op_reset(loom_eager_op_t* op, const char* op_name) {
  if (!op) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_eager_op_reset: op is NULL");
  }
  op->device[0] = '\0';
  op->device_handler = NULL;
  return reset(op, op_name);
}

loom_status_t loom_eager_op_reset_placed(loom_eager_op_t* op,
                                         const char* op_name,
                                         const char* device_name) {
  if (!op) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_eager_op_reset_placed: op is NULL");
  }
  LOOM_RETURN_IF_ERROR(reset(op, op_name));
  if (!device_name || !*device_name) {
    op->device[0] = '\0';
    op->device_handler = NULL;
    return loom_ok_status();
  }
  if (strcmp(device_name, op->device) == 0) return loom_ok_status();
  return loom_eager_op_set_device(op, device_name);
}

void loom_eager_op_fail(loom_eager_op_t* op, loom_status_t error) {
  if (!op || op->error) {
    loom_status_free(error);
    return;
  }
  op->error = error;
}

const char* loom_eager_op_name(const loom_eager_op_t* op) {
  return op ? op->name : NULL;
}

const loom_op_def_t* loom_eager_op_def(const loom_eager_op_t* op) {
  return op ? op->def : NULL;
}

loom_context_t* loom_eager_op_context(const loom_eager_op_t* op) {
  return op ? op->context : NULL;
}

loom_status_t loom_eager_op_set_device(loom_eager_op_t* op,
                                       const char* device_name) {
  if (!op) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_eager_op_set_device: op is NULL");
  }
  if (!device_name) device_name = "";
  size_t length = strlen(device_name);
  if (length >= sizeof(op->device)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "device name '%.64s...' is longer than %zu bytes",
                            device_name, sizeof(op->device) - 1);
  }
  if (*device_name && !loom__device_name_is_valid(device_name)) {
    // TensorFlow's words; the op keeps its previous device.
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "Malformed device specification '%s' in eager "
                            "op: %s",
                            device_name, op->name);
  }
  memcpy(op->device, device_name, length + 1);
  op->device_handler = NULL;  // found when the op executes
  return loom_ok_status();
}

loom_status_t loom_eager_op_set_cancellation(
    loom_eager_op_t* op, loom_cancellation_t* cancellation) {
  if (!op) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_eager_op_set_cancellation: op is NULL");
  }
  loom_cancellation_retain(cancellation);
  loom_cancellation_release(op->cancellation);
  op->cancellation = cancellation;
  return loom_ok_status();
}

const char* loom_eager_op_device(const loom_eager_op_t* op) {
  return op ? op->device : NULL;
}

static loom_status_t reserve_inputs(loom_eager_op_t* op, int32_t extra) {
  if (extra > INT32_MAX - op->num_inputs) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s: too many inputs",
                            op->name);
  }
  int32_t needed = op->num_inputs + extra;
  if (needed <= op->inputs_capacity) return loom_ok_status();
  int32_t capacity = op->inputs_capacity;
  while (capacity < needed) {
    capacity = capacity > INT32_MAX / 2 ? needed : 2 * capacity;
  }
  loom_tensor_handle_t** grown = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_malloc(op->context->allocator,
                                             sizeof(*grown) * (size_t)capacity,
                                             (void**)&grown));
  if (op->num_inputs) {
    memcpy(grown, op->inputs, sizeof(*grown) * (size_t)op->num_inputs);
  }
  if (op->inputs != op->inline_inputs) {
    loom_allocator_free(op->context->allocator, op->inputs);
  }
  op->inputs = grown;
  op->inputs_capacity = capacity;
  return loom_ok_status();
}

loom_status_t loom_eager_op_add_input(loom_eager_op_t* op,
                                      loom_tensor_handle_t* handle) {
  if (LOOM_UNLIKELY(!op)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_eager_op_add_input: op is NULL");
  }
  if (LOOM_UNLIKELY(!handle)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "Invalid handle");
  }
  if (LOOM_UNLIKELY(op->num_inputs == op->inputs_capacity)) {
    LOOM_RETURN_IF_ERROR(reserve_inputs(op, 1));
  }
  loom_tensor_handle_retain(handle);
  op->inputs[op->num_inputs++] = handle;
  return loom_ok_status();
}

// The first variadic input argument whose length attr is unset, or NULL.
static const loom_arg_def_t* open_list_arg(const loom_eager_op_t* op) {
  for (int32_t a = 0; a < op->def->num_inputs; ++a) {
    const loom_arg_def_t* arg = &op->def->inputs[a];
    const char* attr =
        arg->number_attr ? arg->number_attr : arg->type_list_attr;
    if (!attr) continue;
    loom_attr_value_t value;
    if (!loom_op_attrs_get(&op->attrs, attr, &value)) return arg;
  }
  return NULL;
}

loom_status_t loom_eager_op_add_input_list(loom_eager_op_t* op,
                                           loom_tensor_handle_t* const* inputs,
                                           int32_t count) {
  if (!op || count < 0 || (count > 0 && !inputs)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_eager_op_add_input_list: %s",
                            !op ? "op is NULL" : "invalid input list");
  }
  for (int32_t i = 0; i < count; ++i) {
    if (!inputs[i]) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "Invalid handle");
    }
  }
  LOOM_RETURN_IF_ERROR(reserve_inputs(op, count));
  // TensorFlow sets the length of the list argument from the list.
  const loom_arg_def_t* arg = open_list_arg(op);
  if (arg && arg->number_attr) {
    LOOM_RETURN_IF_ERROR(
        loom_op_attrs_set_i64(&op->attrs, arg->number_attr, count));
  }
  for (int32_t i = 0; i < count; ++i) {
    loom_tensor_handle_retain(inputs[i]);
    op->inputs[op->num_inputs++] = inputs[i];
  }
  return loom_ok_status();
}

int32_t loom_eager_op_num_inputs(const loom_eager_op_t* op) {
  return op ? op->num_inputs : 0;
}

loom_tensor_handle_t* loom_eager_op_input(const loom_eager_op_t* op,
                                          int32_t index) {
  if (!op || index < 0 || index >= op->num_inputs) return NULL;
  return op->inputs[index];
}

loom_op_attrs_t* loom_eager_op_attrs(loom_eager_op_t* op) {
  return op ? &op->attrs : NULL;
}

loom_status_t loom__eager_op_input_dtypes(loom_eager_op_t* op,
                                          loom_dtype_t* dtypes) {
  for (int32_t i = 0; i < op->num_inputs; ++i) {
    if (!op->inputs[i]) {
      return loom_make_status(
          LOOM_STATUS_FAILED_PRECONDITION,
          "%s: input %d was handed to a previous execution (only the op held "
          "it); add the inputs again",
          op->name, i);
    }
    loom_tensor_metadata_t metadata;
    LOOM_RETURN_IF_ERROR(
        loom_tensor_handle_wait_metadata(op->inputs[i], &metadata));
    dtypes[i] = metadata.dtype;
  }
  return loom_ok_status();
}

// Whether the op's attrs set the length of every variadic argument up to
// argument `index` (which then locate it).
static bool lengths_are_set(const loom_eager_op_t* op, bool outputs,
                            int32_t index) {
  const loom_arg_def_t* args = outputs ? op->def->outputs : op->def->inputs;
  for (int32_t a = 0; a <= index; ++a) {
    const char* attr =
        args[a].number_attr ? args[a].number_attr : args[a].type_list_attr;
    loom_attr_value_t value;
    if (attr && !loom_op_attrs_get(&op->attrs, attr, &value)) return false;
  }
  return true;
}

loom_status_t loom_eager_op_arg_length(loom_eager_op_t* op, bool outputs,
                                       const char* arg_name,
                                       int32_t* out_length) {
  if (!op || !arg_name || !out_length) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_eager_op_arg_length: %s is NULL",
                            !op         ? "op"
                            : !arg_name ? "arg_name"
                                        : "out_length");
  }
  *out_length = -1;
  const loom_op_def_t* def = op->def;
  int32_t index = outputs ? loom_op_def_find_output(def, arg_name)
                          : loom_op_def_find_input(def, arg_name);
  if (index < 0) {
    // TensorFlow's code and words.
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s '%s' not found",
                            outputs ? "Output" : "Input", arg_name);
  }
  const loom_arg_def_t* arg =
      outputs ? &def->outputs[index] : &def->inputs[index];
  if (!arg->number_attr && !arg->type_list_attr) {
    *out_length = 1;
    return loom_ok_status();
  }
  int32_t start = 0;
  int32_t stop = 0;
  // The attrs set so far may decide it (Split's num_split before any input
  // is added, as TensorFlow answers from the attributes).
  if (lengths_are_set(op, outputs, index)) {
    loom_status_t from_attrs = loom_op_def_arg_range(def, &op->attrs, outputs,
                                                     arg_name, &start, &stop);
    if (!from_attrs) {
      *out_length = stop - start;
      return loom_ok_status();
    }
    loom_status_free(from_attrs);
  }
  // The length attrs as execution would complete them.
  loom_dtype_t stack_dtypes[16];
  loom_dtype_t* dtypes = stack_dtypes;
  if (op->num_inputs > 16) {
    LOOM_RETURN_IF_ERROR(loom_allocator_malloc(
        op->context->allocator, sizeof(*dtypes) * (size_t)op->num_inputs,
        (void**)&dtypes));
  }
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, op->context->allocator);
  loom_status_t status = loom__eager_op_input_dtypes(op, dtypes);
  if (!status) status = loom_op_attrs_merge(&attrs, &op->attrs);
  if (!status) {
    status = loom_op_def_complete_attrs(def, dtypes, op->num_inputs, &attrs);
  }
  if (!status) {
    status =
        loom_op_def_arg_range(def, &attrs, outputs, arg_name, &start, &stop);
  }
  loom_op_attrs_deinitialize(&attrs);
  if (dtypes != stack_dtypes) {
    loom_allocator_free(op->context->allocator, dtypes);
  }
  if (status) {
    return loom_status_annotate(
        status, "the length of %s '%s' of '%s' is not known yet",
        outputs ? "output" : "input", arg_name, op->name);
  }
  *out_length = stop - start;
  return loom_ok_status();
}

loom_status_t loom_eager_op_add_attrs(loom_eager_op_t* op,
                                      const loom_op_attrs_t* attrs) {
  if (!op) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_eager_op_add_attrs: op is NULL");
  }
  size_t count = loom_op_attrs_count(attrs);
  for (size_t i = 0; i < count; ++i) {
    const char* name = NULL;
    loom_attr_value_t value;
    loom_attr_value_t existing;
    if (!loom_op_attrs_entry_at(attrs, i, &name, &value)) continue;
    if (loom_op_attrs_get(&op->attrs, name, &existing)) continue;
    LOOM_RETURN_IF_ERROR(loom_op_attrs_set_value(&op->attrs, name, &value));
  }
  return loom_ok_status();
}

loom_status_t loom_context_attr_kind(loom_context_t* context,
                                     const char* op_name, const char* attr_name,
                                     loom_attr_kind_t* out_kind,
                                     bool* out_is_list) {
  if (!context || !op_name || !attr_name || !out_kind || !out_is_list) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_context_attr_kind: NULL argument");
  }
  const loom_op_def_t* def = NULL;
  void* function = NULL;
  bool calls = false;
  LOOM_RETURN_IF_ERROR(
      loom__context_resolve_op(context, op_name, &def, &function, &calls));
  const loom_attr_def_t* attr = loom_op_def_find_attr(def, attr_name);
  if (!attr) {
    loom__context_release_function(context, function);
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "Attribute '%s' does not exist for this operation",
                            attr_name);
  }
  *out_kind = attr->kind;
  *out_is_list = attr->is_list;
  loom__context_release_function(context, function);
  return loom_ok_status();
}
