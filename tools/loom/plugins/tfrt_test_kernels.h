// The kernels of the tfrt_test plugin (tfrt_test_kernels.c).

#ifndef LOOM_TOOLS_TFRT_TEST_KERNELS_H_
#define LOOM_TOOLS_TFRT_TEST_KERNELS_H_

#include "loom/program_kernel.h"

// Registers tfrt_test's kernels (not its cpu ops) with `executor`.
loom_status_t loom__tfrt_test_add_kernels(loom_program_executor_t* executor);

#endif  // LOOM_TOOLS_TFRT_TEST_KERNELS_H_
