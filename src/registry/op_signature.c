// Attribute completion and argument flattening for op invocations.

#include "loom/op_signature.h"

#include <inttypes.h>
#include <string.h>

// The number of tensors `arg` stands for under `attrs`, or -1 when a length
// attr it depends on is unset.
static int64_t arg_count(const loom_arg_def_t* arg,
                         const loom_op_attrs_t* attrs) {
  if (arg->number_attr) {
    int64_t n = 0;
    loom_status_t status = loom_op_attrs_get_i64(attrs, arg->number_attr, &n);
    if (status) {
      loom_status_free(status);
      return -1;
    }
    return n;
  }
  if (arg->type_list_attr) {
    loom_attr_value_t value;
    if (!loom_op_attrs_get(attrs, arg->type_list_attr, &value) ||
        !value.is_list) {
      return -1;
    }
    return value.count;
  }
  return 1;
}

// The dtype of element `index` of `arg`, or INVALID when unset.
static loom_dtype_t arg_dtype(const loom_arg_def_t* arg,
                              const loom_op_attrs_t* attrs, int64_t index) {
  if (arg->dtype != LOOM_DTYPE_INVALID) return arg->dtype;
  loom_attr_value_t value;
  const char* name = arg->type_attr ? arg->type_attr : arg->type_list_attr;
  if (!name || !loom_op_attrs_get(attrs, name, &value) ||
      value.kind != LOOM_ATTR_KIND_DTYPE) {
    return LOOM_DTYPE_INVALID;
  }
  if (!value.is_list) return value.u.dtype;
  if (index < 0 || index >= value.count) return LOOM_DTYPE_INVALID;
  return ((const loom_dtype_t*)value.u.list)[index];
}

// Sets a type attr from an input, or checks it against what is set.
static loom_status_t bind_type(const loom_op_def_t* op,
                               const loom_arg_def_t* arg, int32_t input_index,
                               loom_dtype_t dtype, loom_op_attrs_t* attrs) {
  loom_attr_value_t value;
  if (loom_op_attrs_get(attrs, arg->type_attr, &value)) {
    if (value.kind == LOOM_ATTR_KIND_DTYPE && !value.is_list &&
        value.u.dtype != dtype) {
      return loom_make_status(
          LOOM_STATUS_INVALID_ARGUMENT,
          "Op '%s': input %d ('%s') has dtype %s but attr '%s' is %s", op->name,
          input_index, arg->name, loom_dtype_name(dtype), arg->type_attr,
          loom_dtype_name(value.u.dtype));
    }
    return loom_ok_status();
  }
  return loom_op_attrs_set_dtype(attrs, arg->type_attr, dtype);
}

static loom_status_t infer_from_inputs(const loom_op_def_t* op,
                                       const loom_dtype_t* input_dtypes,
                                       int32_t num_inputs,
                                       loom_op_attrs_t* attrs) {
  // Tensors not claimed by fixed-length arguments go to the one variadic
  // argument whose length is still unknown.
  int64_t fixed = 0;
  int32_t unknown_args = 0;
  for (int32_t a = 0; a < op->num_inputs; ++a) {
    int64_t count = arg_count(&op->inputs[a], attrs);
    if (count < 0) {
      unknown_args++;
    } else {
      fixed += count;
    }
  }
  if (unknown_args > 1) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "Op '%s': cannot infer the lengths of %d variadic inputs from %d "
        "tensors; set their length attrs",
        op->name, unknown_args, num_inputs);
  }
  if (fixed > num_inputs || (unknown_args == 0 && fixed != num_inputs)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "Op '%s' expects %" PRId64 " inputs%s, got %d",
                            op->name, fixed, unknown_args ? " or more" : "",
                            num_inputs);
  }
  int32_t next = 0;
  for (int32_t a = 0; a < op->num_inputs; ++a) {
    const loom_arg_def_t* arg = &op->inputs[a];
    int64_t count = arg_count(arg, attrs);
    if (count < 0) {
      count = num_inputs - fixed;
      if (arg->number_attr) {
        LOOM_RETURN_IF_ERROR(
            loom_op_attrs_set_i64(attrs, arg->number_attr, count));
      } else {
        // A list(type) attr: its value is the inputs' dtypes.
        LOOM_RETURN_IF_ERROR(loom_op_attrs_set_list(
            attrs, arg->type_list_attr, LOOM_ATTR_KIND_DTYPE,
            input_dtypes + next, count));
      }
    }
    for (int64_t i = 0; i < count; ++i, ++next) {
      loom_dtype_t dtype = input_dtypes[next];
      if (arg->type_attr) {
        LOOM_RETURN_IF_ERROR(bind_type(op, arg, next, dtype, attrs));
      }
      loom_dtype_t expected = arg_dtype(arg, attrs, i);
      if (expected != LOOM_DTYPE_INVALID && expected != dtype) {
        return loom_make_status(
            LOOM_STATUS_INVALID_ARGUMENT,
            "Op '%s': input %d ('%s') has dtype %s, expected %s", op->name,
            next, arg->name, loom_dtype_name(dtype), loom_dtype_name(expected));
      }
    }
  }
  return loom_ok_status();
}

loom_status_t loom_op_def_complete_attrs(const loom_op_def_t* op,
                                         const loom_dtype_t* input_dtypes,
                                         int32_t num_inputs,
                                         loom_op_attrs_t* attrs) {
  if (!op || !attrs || (num_inputs > 0 && !input_dtypes) || num_inputs < 0) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_op_def_complete_attrs: %s",
                            !op      ? "op is NULL"
                            : !attrs ? "attrs is NULL"
                                     : "invalid input dtypes");
  }
  if (input_dtypes) {
    LOOM_RETURN_IF_ERROR(
        infer_from_inputs(op, input_dtypes, num_inputs, attrs));
  }
  for (int32_t i = 0; i < op->num_attrs; ++i) {
    const loom_attr_def_t* attr = &op->attrs[i];
    loom_attr_value_t value;
    if (!loom_op_attrs_get(attrs, attr->name, &value)) {
      if (!attr->has_default ||
          !loom_op_attrs_get(op->defaults, attr->name, &value)) {
        return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "Op '%s': attr '%s' (\"%s\") is not set and "
                                "has no default",
                                op->name, attr->name, attr->spec);
      }
      LOOM_RETURN_IF_ERROR(loom_op_attrs_set_value(attrs, attr->name, &value));
      continue;
    }
    LOOM_RETURN_IF_ERROR(loom_attr_def_check_value(op, attr, &value));
  }
  return loom_ok_status();
}

loom_status_t loom_op_def_flat_types(const loom_op_def_t* op,
                                     const loom_op_attrs_t* attrs, bool outputs,
                                     loom_dtype_t* dtypes, int32_t capacity,
                                     int32_t* out_count) {
  if (!op || !attrs || !out_count || (capacity > 0 && !dtypes)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_op_def_flat_types: NULL argument");
  }
  const loom_arg_def_t* args = outputs ? op->outputs : op->inputs;
  int32_t num_args = outputs ? op->num_outputs : op->num_inputs;
  int64_t total = 0;
  for (int32_t a = 0; a < num_args; ++a) {
    int64_t count = arg_count(&args[a], attrs);
    if (count < 0) {
      return loom_make_status(
          LOOM_STATUS_INVALID_ARGUMENT,
          "Op '%s': the length of %s '%s' is unknown (attr '%s' is not set)",
          op->name, outputs ? "output" : "input", args[a].name,
          args[a].number_attr ? args[a].number_attr : args[a].type_list_attr);
    }
    for (int64_t i = 0; i < count; ++i, ++total) {
      loom_dtype_t dtype = arg_dtype(&args[a], attrs, i);
      if (dtype == LOOM_DTYPE_INVALID) {
        return loom_make_status(
            LOOM_STATUS_INVALID_ARGUMENT,
            "Op '%s': the dtype of %s '%s' is unknown (attr '%s' is not set)",
            op->name, outputs ? "output" : "input", args[a].name,
            args[a].type_attr ? args[a].type_attr : args[a].type_list_attr);
      }
      if (total < capacity) dtypes[total] = dtype;
    }
    if (total > INT32_MAX) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "Op '%s' has more than 2^31 %s", op->name,
                              outputs ? "outputs" : "inputs");
    }
  }
  *out_count = (int32_t)total;
  return loom_ok_status();
}

loom_status_t loom_op_def_arg_range(const loom_op_def_t* op,
                                    const loom_op_attrs_t* attrs, bool outputs,
                                    const char* name, int32_t* out_start,
                                    int32_t* out_stop) {
  if (!op || !attrs || !name || !out_start || !out_stop) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_op_def_arg_range: NULL argument");
  }
  const loom_arg_def_t* args = outputs ? op->outputs : op->inputs;
  int32_t num_args = outputs ? op->num_outputs : op->num_inputs;
  int64_t start = 0;
  for (int32_t a = 0; a < num_args; ++a) {
    int64_t count = arg_count(&args[a], attrs);
    if (count < 0) count = 0;
    if (strcmp(args[a].name, name) == 0) {
      *out_start = (int32_t)start;
      *out_stop = (int32_t)(start + count);
      return loom_ok_status();
    }
    start += count;
  }
  return loom_make_status(LOOM_STATUS_NOT_FOUND, "Op '%s' has no %s named '%s'",
                          op->name, outputs ? "output" : "input", name);
}
