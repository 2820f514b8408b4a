// TensorFlow's ConfigProto and RunOptions with protobuf-c: written by
// TF_CreateConfig and TF_CreateRunOptions, read by
// TFE_ContextOptionsSetConfig (the messages are in tf_framework.proto).

#include "compat/tf_config.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <strings.h>

#include "tensorflow/c/c_api_experimental.h"
#include "tf_framework.pb-c.h"

// A buffer holding `message` serialized (NULL when out of memory).
static TF_Buffer* pack(const ProtobufCMessage* message) {
  size_t length = protobuf_c_message_get_packed_size(message);
  uint8_t* bytes = malloc(length ? length : 1);
  if (!bytes) return NULL;
  protobuf_c_message_pack(message, bytes);
  TF_Buffer* buffer = TF_NewBufferFromString(bytes, length);
  free(bytes);
  return buffer;
}

TF_Buffer* TF_CreateConfig(unsigned char enable_xla_compilation,
                           unsigned char gpu_memory_allow_growth,
                           unsigned int num_cpu_devices) {
  Tensorflow__ConfigProto__DeviceCountEntry cpu =
      TENSORFLOW__CONFIG_PROTO__DEVICE_COUNT_ENTRY__INIT;
  cpu.key = "CPU";
  // The value is an int32: a count above INT32_MAX wraps, as in C++.
  cpu.value = (int32_t)num_cpu_devices;
  Tensorflow__ConfigProto__DeviceCountEntry* entries[1] = {&cpu};
  Tensorflow__GPUOptions gpu = TENSORFLOW__GPUOPTIONS__INIT;
  gpu.allow_growth = gpu_memory_allow_growth != 0;
  Tensorflow__OptimizerOptions optimizer = TENSORFLOW__OPTIMIZER_OPTIONS__INIT;
  optimizer.global_jit_level =
      enable_xla_compilation
          ? TENSORFLOW__OPTIMIZER_OPTIONS__GLOBAL_JIT_LEVEL__ON_1
          : TENSORFLOW__OPTIMIZER_OPTIONS__GLOBAL_JIT_LEVEL__OFF;
  Tensorflow__GraphOptions graph = TENSORFLOW__GRAPH_OPTIONS__INIT;
  graph.optimizer_options = &optimizer;
  Tensorflow__ConfigProto config = TENSORFLOW__CONFIG_PROTO__INIT;
  config.n_device_count = 1;
  config.device_count = entries;
  config.gpu_options = &gpu;
  config.graph_options = &graph;
  // TensorFlow sets its XLA flag too when it enables compilation.
  if (enable_xla_compilation) TF_SetTfXlaCpuGlobalJit(1);
  return pack(&config.base);
}

TF_Buffer* TF_CreateRunOptions(unsigned char enable_full_trace) {
  Tensorflow__RunOptions options = TENSORFLOW__RUN_OPTIONS__INIT;
  if (enable_full_trace) {
    options.trace_level = TENSORFLOW__RUN_OPTIONS__TRACE_LEVEL__FULL_TRACE;
  }
  return pack(&options.base);
}

loom_status_t loom__tf_config_parse(const void* proto, size_t length,
                                    loom__tf_config_t* out_config) {
  *out_config = (loom__tf_config_t){0};
  Tensorflow__ConfigProto* config =
      tensorflow__config_proto__unpack(NULL, length, proto);
  if (!config) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "Unable to parse ConfigProto (%zu bytes)", length);
  }
  loom_status_t status = loom_ok_status();
  for (size_t i = 0; i < config->n_device_count && !status; ++i) {
    const Tensorflow__ConfigProto__DeviceCountEntry* entry =
        config->device_count[i];
    if (strcasecmp(entry->key, "CPU") == 0) {
      out_config->num_cpu_devices = entry->value;
    } else if (entry->value != 0) {
      status = loom_make_status(
          LOOM_STATUS_INVALID_ARGUMENT,
          "ConfigProto.device_count asks for %d '%s' devices; Loom has CPU "
          "devices only",
          (int)entry->value, entry->key);
    }
  }
  out_config->num_threads = config->intra_op_parallelism_threads;
  out_config->allow_soft_placement = config->allow_soft_placement;
  out_config->log_device_placement = config->log_device_placement;
  tensorflow__config_proto__free_unpacked(config, NULL);
  return status;
}
