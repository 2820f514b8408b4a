// TF_DataTypeSize over the dtype table.

#include "tensorflow/c/tf_datatype.h"
#include "loom/dtype.h"

size_t TF_DataTypeSize(TF_DataType dt) {
  return loom_dtype_size((loom_dtype_t)dt);
}
