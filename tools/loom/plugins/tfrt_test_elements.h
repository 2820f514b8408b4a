// Element access the tfrt_test ops share (tfrt_test_elements.c).

#ifndef LOOM_TOOLS_TFRT_TEST_ELEMENTS_H_
#define LOOM_TOOLS_TFRT_TEST_ELEMENTS_H_

#include <stdbool.h>
#include <stdint.h>

#include "loom/tensor.h"

// The dtypes the tfrt_test ops compute on.
bool loom__tfrt_test_is_supported(loom_dtype_t dtype);

// Element i of a dense or scalar tensor (a scalar tensor repeats its value).
double loom__tfrt_test_get(const loom_tensor_t* tensor, int64_t i);

// Stores `value` as element i of `data`, of `dtype`.
void loom__tfrt_test_put(loom_dtype_t dtype, void* data, int64_t i,
                         double value);

// Integer add that wraps instead of overflowing.
double loom__tfrt_test_add_values(loom_dtype_t dtype, double a, double b);

#endif  // LOOM_TOOLS_TFRT_TEST_ELEMENTS_H_
