// Binding an op definition to one invocation: completing its attributes
// (defaults, and TensorFlow's inference of type and length attrs from the
// inputs) and flattening its arguments into per-tensor dtypes.

#ifndef LOOM_OP_SIGNATURE_H_
#define LOOM_OP_SIGNATURE_H_

#include <stdbool.h>
#include <stdint.h>

#include "loom/dtype.h"
#include "loom/macros.h"
#include "loom/op_attrs.h"
#include "loom/op_def.h"
#include "loom/status.h"

LOOM_EXTERN_C_BEGIN

// Completes `attrs` for an invocation with the given input dtypes (one per
// input tensor, in order; NULL when none are known yet):
//   - sets every type attr ("T"), length attr ("N") and list(type) attr
//     that the inputs determine, checking that inputs sharing an attr agree;
//   - adds the defaults of attrs still unset;
//   - checks every attr value against its definition.
// INVALID_ARGUMENT naming the op, the argument and the attr for a mismatch
// ("Op 'AddV2': input 1 ('y') has dtype int32 but attr 'T' is float") or a
// missing attr without default.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_op_def_complete_attrs(
    const loom_op_def_t* op, const loom_dtype_t* input_dtypes,
    int32_t num_inputs, loom_op_attrs_t* attrs);

// The flattened dtypes of the inputs (outputs == false) or outputs of an
// invocation with complete attrs: writes up to `capacity` and sets
// *out_count to the total.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_op_def_flat_types(
    const loom_op_def_t* op, const loom_op_attrs_t* attrs, bool outputs,
    loom_dtype_t* dtypes, int32_t capacity, int32_t* out_count);

// The flattened index range [start, stop) of the argument `name` (an input
// or, with outputs == true, an output). NOT_FOUND for an unknown name.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_op_def_arg_range(
    const loom_op_def_t* op, const loom_op_attrs_t* attrs, bool outputs,
    const char* name, int32_t* out_start, int32_t* out_stop);

LOOM_EXTERN_C_END

#endif  // LOOM_OP_SIGNATURE_H_
