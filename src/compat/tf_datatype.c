// TF_DataTypeSize over the dtype table.

#include "loom/dtype.h"
#include "tensorflow/c/tf_datatype.h"

size_t TF_DataTypeSize(TF_DataType dt) {
  return loom_dtype_size((loom_dtype_t)dt);
}
