// Resources' handle data from resource tensors: the variables' own
// (kernels/resource.c) is the only kind of resource with a value type.

#include "corert/resource_handle_data.h"

#include "kernels/resource.h"

bool loom__resource_handle_data(const loom_tensor_t* tensor,
                                loom_handle_data_t* out_data) {
  return loom__resource_tensor_handle_data(tensor, out_data);
}
