// What the functions derived from a call share (trace_derived.h).

#include "handlers/trace/trace_derived.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

void loom__derived_key_put(loom__derived_key_t* key, const void* data,
                           size_t size) {
  if (key->bytes) memcpy(key->bytes + key->size, data, size);
  key->size += size;
}

void loom__derived_key_put_metadata(loom__derived_key_t* key, bool used,
                                    const loom_tensor_metadata_t* metadata) {
  unsigned char flag = used;
  loom__derived_key_put(key, &flag, 1);
  if (!used) return;
  int32_t head[2] = {(int32_t)metadata->dtype, metadata->shape.rank};
  loom__derived_key_put(key, head, sizeof(head));
  if (metadata->shape.rank > 0) {
    loom__derived_key_put(key, loom_shape_dims(&metadata->shape),
                          sizeof(int64_t) * (size_t)metadata->shape.rank);
  }
}

void loom__derived_name(loom_context_t* context, const char* base,
                        const char* kind, char* name, size_t capacity) {
  static _Atomic int64_t g_serial;
  bool short_base = strlen(base) + strlen(kind) + 24 < capacity;
  for (int32_t k = 0;; ++k) {
    if (short_base) {
      snprintf(name, capacity, "%s_%s_%" PRId32, base, kind, k);
    } else {
      snprintf(name, capacity, "call_%s_%" PRId64, kind,
               atomic_fetch_add_explicit(&g_serial, 1, memory_order_relaxed));
    }
    if (!loom_context_has_function(context, name)) return;
  }
}

loom_status_t loom__derived_exit_scope(loom_context_t* context,
                                       loom_status_t status) {
  loom_status_t exited = loom_context_exit_scope(context);
  if (!status) return exited;
  loom_status_free(exited);
  return status;
}

// The builders are installed as the library loads. libloom.a's users link
// this object through the anchor, which src/CMakeLists.txt names to the
// linker (nothing else references it); its constructor links in the
// builders' objects.
const int loom__trace_derived_anchor = 1;

__attribute__((constructor)) static void install_builders(void) {
  loom__trace_install_call_backward();
  loom__trace_install_call_jvp();
}
