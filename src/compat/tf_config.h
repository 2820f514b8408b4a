// TensorFlow's ConfigProto as Loom reads it (TFE_ContextOptionsSetConfig):
// the settings that mean something for an eager context here.

#ifndef LOOM_COMPAT_TF_CONFIG_H_
#define LOOM_COMPAT_TF_CONFIG_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loom/status.h"

typedef struct loom__tf_config_t {
  int32_t num_cpu_devices;  // device_count["CPU"]; 0 when absent
  int32_t num_threads;      // intra_op_parallelism_threads; 0 when absent
  bool allow_soft_placement;
  bool log_device_placement;
} loom__tf_config_t;

// Decodes a serialized ConfigProto; INVALID_ARGUMENT when it is not one
// (TensorFlow's words), or names a device type other than CPU with a
// non-zero count.
loom_status_t loom__tf_config_parse(const void* proto, size_t length,
                                    loom__tf_config_t* out_config);

#endif  // LOOM_COMPAT_TF_CONFIG_H_
