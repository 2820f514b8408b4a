// Programs: parsing entry point, lifetime and queries.

#include <stdatomic.h>
#include <string.h>

#include "function/program_internal.h"

bool loom__program_parse_text(loom_program_t* program, const char* text,
                              size_t size, loom_status_t* out_error,
                              program_source_location_t* out_location);

// Program ids key the bindings that executors keep of the programs they
// run, which they do not own: an id must never repeat in the process,
// where an address may, once a program is freed.
static _Atomic uint64_t g_next_program_id = 1;

const program_function_t* loom__program_find_function(
    const loom_program_t* program, const char* name, size_t length) {
  uint64_t hash = loom__hash_bytes(name, length);
  uint64_t index = 0;
  for (uint64_t probe = 0;
       loom__hash_map_find(&program->functions_by_name, hash + probe, &index);
       ++probe) {
    const program_function_t* function = program->functions[index];
    if (strlen(function->name) == length &&
        memcmp(function->name, name, length) == 0) {
      return function;
    }
  }
  return NULL;
}

loom_status_t loom_program_parse(loom_allocator_t allocator,
                                 const char* file_name, const char* text,
                                 size_t size, loom_program_t** out_program,
                                 loom_program_location_t* out_error_location) {
  if (out_error_location) {
    out_error_location->file = file_name;
    out_error_location->line = 0;
    out_error_location->column = 0;
  }
  if (!file_name || (!text && size) || !out_program) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_program_parse: %s is NULL",
                            !file_name     ? "file_name"
                            : !out_program ? "out_program"
                                           : "text");
  }
  *out_program = NULL;
  loom_program_t* program = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_calloc(allocator, sizeof(*program), (void**)&program));
  program->allocator = allocator;
  program->id = atomic_fetch_add(&g_next_program_id, 1);
  loom__arena_initialize(&program->arena, allocator);
  loom__hash_map_initialize(&program->functions_by_name, allocator);
  loom_status_t status = loom__arena_strndup(
      &program->arena, file_name, strlen(file_name), &program->file_name);
  if (status) {
    loom_program_destroy(program);
    return status;
  }
  program_source_location_t where = {0, 0};
  if (!loom__program_parse_text(program, text ? text : "", size, &status,
                                &where)) {
    if (out_error_location) {
      out_error_location->line = where.line;
      out_error_location->column = where.column;
    }
    loom_program_destroy(program);
    return status;
  }
  *out_program = program;
  return loom_ok_status();
}

void loom_program_destroy(loom_program_t* program) {
  if (!program) return;
  for (int32_t i = 0; i < program->num_frozen; ++i) {
    loom_op_attrs_release(program->frozen[i]);
  }
  loom_allocator_free(program->allocator, (void*)program->frozen);
  loom__hash_map_deinitialize(&program->functions_by_name);
  loom__arena_deinitialize(&program->arena);
  loom_allocator_free(program->allocator, program);
}

const char* loom_program_file_name(const loom_program_t* program) {
  return program ? program->file_name : NULL;
}

int32_t loom_program_function_count(const loom_program_t* program) {
  return program ? program->num_functions : 0;
}

static const program_function_t* function_at(const loom_program_t* program,
                                             int32_t index) {
  if (!program || index < 0 || index >= program->num_functions) return NULL;
  return program->functions[index];
}

const char* loom_program_function_name(const loom_program_t* program,
                                       int32_t index) {
  const program_function_t* function = function_at(program, index);
  return function ? function->name : NULL;
}

int32_t loom_program_find_function(const loom_program_t* program,
                                   const char* name) {
  if (!program || !name) return -1;
  const program_function_t* function =
      loom__program_find_function(program, name, strlen(name));
  return function ? function->index : -1;
}

int32_t loom_program_function_num_arguments(const loom_program_t* program,
                                            int32_t index) {
  const program_function_t* function = function_at(program, index);
  return function ? function->num_arguments : -1;
}

int32_t loom_program_function_num_results(const loom_program_t* program,
                                          int32_t index) {
  const program_function_t* function = function_at(program, index);
  return function ? function->num_results : -1;
}

int64_t loom_program_op_count(const loom_program_t* program) {
  return program ? program->num_ops : 0;
}
