// What a gradient or JVP function sees of its forward op: a view built on
// the caller's stack over what the tape kept.

#include "handlers/autodiff/autodiff_internal.h"
#include "loom/op_signature.h"

void loom__gradient_context_initialize(
    loom_gradient_context_t* context, loom_context_t* eager,
    const char* op_name, const loom_op_def_t* op_def,
    const loom_op_attrs_t* given_attrs, int32_t num_inputs,
    loom_tensor_handle_t* const* inputs,
    const loom_tensor_metadata_t* input_metadata, int32_t num_outputs,
    loom_tensor_handle_t* const* outputs,
    const loom_tensor_metadata_t* output_metadata) {
  context->eager = eager;
  context->op_name = op_name;
  context->op_def = op_def;
  context->given_attrs = given_attrs;
  context->attrs_completed = false;
  context->num_inputs = num_inputs;
  context->num_outputs = num_outputs;
  context->inputs = inputs;
  context->outputs = outputs;
  context->input_metadata = input_metadata;
  context->output_metadata = output_metadata;
  context->op_cache = NULL;
  context->input_needed = NULL;
  context->ones_output_gradients = 0;
  context->output_gradients = NULL;
}

void loom__gradient_context_deinitialize(loom_gradient_context_t* context) {
  if (context->attrs_completed) {
    loom_op_attrs_deinitialize(&context->completed_attrs);
    context->attrs_completed = false;
  }
}

loom_context_t* loom_gradient_context_eager(
    const loom_gradient_context_t* context) {
  return context ? context->eager : NULL;
}

const char* loom_gradient_context_op_name(
    const loom_gradient_context_t* context) {
  return context ? context->op_name : NULL;
}

// The given attributes completed with those inferred from the input dtypes
// and the definition's defaults; the given ones alone when that fails.
const loom_op_attrs_t* loom_gradient_context_attrs(
    const loom_gradient_context_t* context) {
  if (!context) return NULL;
  loom_gradient_context_t* mutable_context = (loom_gradient_context_t*)context;
  if (context->attrs_completed) return &context->completed_attrs;
  if (!context->op_def) return context->given_attrs;
  loom_dtype_t stack_dtypes[32];
  if (context->num_inputs > 32) return context->given_attrs;
  for (int32_t i = 0; i < context->num_inputs; ++i) {
    stack_dtypes[i] = context->input_metadata[i].dtype;
  }
  loom_op_attrs_t* attrs = &mutable_context->completed_attrs;
  loom_op_attrs_initialize(attrs, loom_allocator_default());
  loom_status_t status = loom_op_attrs_merge(attrs, context->given_attrs);
  if (!status) {
    status = loom_op_def_complete_attrs(context->op_def, stack_dtypes,
                                        context->num_inputs, attrs);
  }
  if (status) {
    loom_status_free(status);
    loom_op_attrs_deinitialize(attrs);
    return context->given_attrs;
  }
  mutable_context->attrs_completed = true;
  return attrs;
}

bool loom_gradient_context_attr(const loom_gradient_context_t* context,
                                const char* name,
                                loom_attr_value_t* out_value) {
  if (!context || !name || !out_value) return false;
  if (context->given_attrs &&
      loom_op_attrs_get(context->given_attrs, name, out_value)) {
    return true;
  }
  if (context->op_def && context->op_def->defaults &&
      loom_op_attrs_get(context->op_def->defaults, name, out_value)) {
    return true;
  }
  // Inferred from the inputs (a type attribute): the complete set.
  const loom_op_attrs_t* attrs = loom_gradient_context_attrs(context);
  return attrs && attrs != context->given_attrs &&
         loom_op_attrs_get(attrs, name, out_value);
}

int32_t loom_gradient_context_num_inputs(
    const loom_gradient_context_t* context) {
  return context ? context->num_inputs : 0;
}

int32_t loom_gradient_context_num_outputs(
    const loom_gradient_context_t* context) {
  return context ? context->num_outputs : 0;
}

loom_tensor_handle_t* loom_gradient_context_input(
    const loom_gradient_context_t* context, int32_t index) {
  if (!context || !context->inputs || index < 0 ||
      index >= context->num_inputs) {
    return NULL;
  }
  return context->inputs[index];
}

loom_tensor_handle_t* loom_gradient_context_output(
    const loom_gradient_context_t* context, int32_t index) {
  if (!context || !context->outputs || index < 0 ||
      index >= context->num_outputs) {
    return NULL;
  }
  return context->outputs[index];
}

const loom_tensor_metadata_t* loom_gradient_context_input_metadata(
    const loom_gradient_context_t* context, int32_t index) {
  if (!context || index < 0 || index >= context->num_inputs) return NULL;
  return &context->input_metadata[index];
}

const loom_tensor_metadata_t* loom_gradient_context_output_metadata(
    const loom_gradient_context_t* context, int32_t index) {
  if (!context || index < 0 || index >= context->num_outputs) return NULL;
  return &context->output_metadata[index];
}

bool loom_gradient_context_input_needs_gradient(
    const loom_gradient_context_t* context, int32_t index) {
  if (!context || index < 0 || index >= context->num_inputs) return false;
  return !context->input_needed || context->input_needed[index];
}
