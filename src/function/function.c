// The eager function object (loom/function.h): references, accessors and
// the references of its body ("x", "node:out:index", ...).

#include <stdlib.h>
#include <string.h>

#include "function/function_capture.h"
#include "function/function_internal.h"
#include "function/function_replay.h"

void loom_function_retain(loom_function_t* function) {
  if (function) {
    atomic_fetch_add_explicit(&function->references, 1, memory_order_relaxed);
  }
}

void loom_function_release(loom_function_t* function) {
  if (!function || atomic_fetch_sub_explicit(&function->references, 1,
                                             memory_order_acq_rel) != 1) {
    return;
  }
  for (int32_t i = 0; i < function->num_nodes; ++i) {
    loom_op_attrs_deinitialize(&function->nodes[i].attrs);
  }
  loom__function_release_captures(function);
  loom__function_release_replays(function);
  loom_allocator_t allocator = function->allocator;
  loom_allocator_free(allocator, function->nodes);
  loom_allocator_free(allocator, function->inputs);
  loom_allocator_free(allocator, function->outputs);
  loom_op_registry_destroy(function->registry);
  loom__arena_deinitialize(&function->arena);
  loom_allocator_free(allocator, function);
}

const char* loom_function_name(const loom_function_t* function) {
  return function ? function->name : NULL;
}

const loom_op_def_t* loom_function_signature(const loom_function_t* function) {
  return function ? loom__function_call_signature(function) : NULL;
}

int32_t loom_function_num_nodes(const loom_function_t* function) {
  return function ? function->num_nodes : 0;
}

loom_status_t loom_function_get_stats(const loom_function_t* function,
                                      loom_function_stats_t* out_stats) {
  if (!function || !out_stats) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_function_get_stats: %s is NULL",
                            !function ? "function" : "out_stats");
  }
  size_t size = out_stats->struct_size;
  if (size < LOOM_FUNCTION_STATS_V1_SIZE) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "loom_function_get_stats: out_stats->struct_size is %zu, below the "
        "first version's %zu (set it to sizeof(loom_function_stats_t), %zu)",
        size, (size_t)LOOM_FUNCTION_STATS_V1_SIZE,
        sizeof(loom_function_stats_t));
  }
  loom_function_t* mutable = (loom_function_t*)function;
  // Each field is written only when it lies within the caller's struct.
#define LOOM_STATS_FILL(field)                                             \
  if (offsetof(loom_function_stats_t, field) + sizeof(out_stats->field) <= \
      size) {                                                              \
    out_stats->field =                                                     \
        atomic_load_explicit(&mutable->field, memory_order_relaxed);       \
  }
  LOOM_STATS_FILL(planned_calls)
  LOOM_STATS_FILL(plans_built)
  LOOM_STATS_FILL(planned_nodes)
  LOOM_STATS_FILL(replays_built)
  LOOM_STATS_FILL(replay_hits)
  LOOM_STATS_FILL(frame_calls)
  LOOM_STATS_FILL(buffers_reused)
  LOOM_STATS_FILL(buffers_allocated)
  LOOM_STATS_FILL(backward_functions_built)
  LOOM_STATS_FILL(backward_function_hits)
#undef LOOM_STATS_FILL
  return loom_ok_status();
}

static int32_t find_input(const loom_function_t* function, const char* name,
                          size_t length) {
  for (int32_t i = 0; i < function->num_inputs; ++i) {
    const char* input = function->inputs[i].name;
    if (strlen(input) == length && memcmp(input, name, length) == 0) return i;
  }
  return -1;
}

static int32_t find_node_n(const loom_function_t* function, const char* name,
                           size_t length) {
  for (int32_t i = 0; i < function->num_nodes; ++i) {
    const char* node = function->nodes[i].name;
    if (strlen(node) == length && memcmp(node, name, length) == 0) return i;
  }
  return -1;
}

// A non-negative decimal index, or -1.
static int32_t parse_index(const char* text) {
  if (!*text) return -1;
  int64_t value = 0;
  for (const char* c = text; *c; ++c) {
    if (*c < '0' || *c > '9') return -1;
    value = value * 10 + (*c - '0');
    if (value > INT32_MAX) return -1;
  }
  return (int32_t)value;
}

loom_status_t loom__function_parse_ref(loom_function_t* function,
                                       const char* text, const char* where,
                                       loom__function_ref_t* out) {
  memset(out, 0, sizeof(*out));
  out->text = text;
  out->node = -1;
  out->input = -1;
  out->index = -1;
  const char* first_colon = strchr(text, ':');
  const char* second_colon = first_colon ? strchr(first_colon + 1, ':') : NULL;
  if (!*text || (second_colon && strchr(second_colon + 1, ':'))) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "function '%s': %s: malformed reference '%s' "
                            "(use 'input', 'node:out' or 'node:out:index')",
                            function->name, where, text);
  }
  size_t head = first_colon ? (size_t)(first_colon - text) : strlen(text);
  if (!first_colon || !second_colon) {
    int32_t input = find_input(function, text, head);
    const loom__function_arg_t* arg =
        input >= 0 ? &function->inputs[input] : NULL;
    if (arg && (arg->number_attr || arg->type_list_attr)) {
      // A list input: "xs" (the whole list) or "xs:i" (element i).
      out->input = input;
      if (first_colon) {
        out->index = parse_index(first_colon + 1);
        if (out->index < 0) {
          return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                  "function '%s': %s: '%s': the index '%s' is "
                                  "not a non-negative integer",
                                  function->name, where, text, first_colon + 1);
        }
      }
      return loom_ok_status();
    }
    if (input >= 0) {
      // An input is one tensor: "x" or "x:0".
      if (first_colon && parse_index(first_colon + 1) != 0) {
        return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "function '%s': %s: '%s': input '%.*s' is one "
                                "tensor (index 0)",
                                function->name, where, text, (int)head, text);
      }
      out->input = input;
      out->index = 0;
      return loom_ok_status();
    }
  }
  int32_t node = find_node_n(function, text, head);
  if (node < 0) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "function '%s': %s: '%s' names neither an input nor a node%s",
        function->name, where, text,
        first_colon ? "" : " (a node's output is 'node:out:index')");
  }
  if (!first_colon || first_colon[1] == '\0' || first_colon[1] == ':') {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "function '%s': %s: '%s' names node '%.*s' "
                            "without an output argument ('node:out:index')",
                            function->name, where, text, (int)head, text);
  }
  size_t out_length = second_colon ? (size_t)(second_colon - first_colon - 1)
                                   : strlen(first_colon + 1);
  LOOM_RETURN_IF_ERROR(loom__arena_strndup(&function->arena, first_colon + 1,
                                           out_length, &out->output));
  out->node = node;
  if (second_colon) {
    out->index = parse_index(second_colon + 1);
    if (out->index < 0) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "function '%s': %s: '%s': the index '%s' is not "
                              "a non-negative integer",
                              function->name, where, text, second_colon + 1);
    }
  }
  return loom_ok_status();
}
