// Loom's native API: everything at once.

#ifndef LOOM_LOOM_H_
#define LOOM_LOOM_H_

#include "loom/allocator.h"
#include "loom/async_value.h"
#include "loom/attr_value.h"
#include "loom/autodiff.h"
#include "loom/buffer.h"
#include "loom/builtin_ops.h"
#include "loom/cpu_op_handler.h"
#include "loom/dtype.h"
#include "loom/eager.h"
#include "loom/fault_allocator.h"
#include "loom/handlers.h"
#include "loom/host_context.h"
#include "loom/kernel.h"
#include "loom/macros.h"
#include "loom/op_attrs.h"
#include "loom/op_def.h"
#include "loom/op_handler.h"
#include "loom/op_signature.h"
#include "loom/parallel.h"
#include "loom/plugin.h"
#include "loom/program.h"
#include "loom/program_kernel.h"
#include "loom/resource_manager.h"
#include "loom/runtime.h"
#include "loom/shape.h"
#include "loom/shape_inference.h"
#include "loom/status.h"
#include "loom/tensor.h"
#include "loom/tensor_handle.h"
#include "loom/tensor_metadata.h"
#include "loom/thread_pool.h"
#include "loom/tstring.h"

#endif  // LOOM_LOOM_H_
