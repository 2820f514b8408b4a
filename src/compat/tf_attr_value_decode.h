// Decoding TensorFlow's AttrValue and TensorProto into Loom's attribute
// values (tf_attr_value_decode.c).

#ifndef LOOM_COMPAT_TF_ATTR_VALUE_DECODE_H_
#define LOOM_COMPAT_TF_ATTR_VALUE_DECODE_H_

#include "loom/op_attrs.h"
#include "loom/tensor.h"
#include "tf_framework.pb-c.h"

// Sets attr `name` of `attrs` to `value`. A placeholder is an error here
// (the caller handles them); an empty list, whose kind the bytes do not
// tell, leaves the attr unset. UNIMPLEMENTED for lists of tensors or
// functions and for tensors of strings.
LOOM_MUST_USE_RESULT loom_status_t
loom__tf_decode_attr_value(const Tensorflow__AttrValue* value, const char* name,
                           loom_op_attrs_t* attrs);

// A host tensor (a new reference) from `proto`: tensor_content, or the
// typed values (the last repeating, as TensorFlow fills), or zeros.
LOOM_MUST_USE_RESULT loom_status_t
loom__tf_decode_tensor(const Tensorflow__TensorProto* proto,
                       const char* attr_name, loom_tensor_t** out_tensor);

#endif  // LOOM_COMPAT_TF_ATTR_VALUE_DECODE_H_
