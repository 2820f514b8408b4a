// Running a program's functions the way TFRT's bef_executor does, with its
// output: `--- Running 'f':` and `'f' returned ...` lines.

#include <inttypes.h>
#include <string.h>

#include "function/program_executor.h"

void loom_program_run_options_initialize(loom_program_run_options_t* options) {
  if (!options) return;
  memset(options, 0, sizeof(*options));
  options->struct_size = sizeof(*options);
}

// Prints one result as bef_executor does: i1, i32, i64, f32, f64 values,
// `<type> value` for other types, `<<error: MSG>>` for errors.
static void print_result(FILE* out, const program_type_t* type,
                         loom_async_value_t* value) {
  if (loom_async_value_is_error(value)) {
    char fallback[128];
    const char* message = loom__program_status_text(
        loom_async_value_error(value), fallback, sizeof(fallback));
    // The first line: what follows it (a call stack) was reported with
    // the error.
    fprintf(out, "<<error: %.*s>>", (int)strcspn(message, "\n"), message);
    return;
  }
  const loom_program_value_t* payload = loom_program_value_get(value);
  const char* name = type->spelling;
  if (payload &&
      strcmp(name, loom_program_value_kind_name(payload->kind)) == 0) {
    switch (payload->kind) {
      case LOOM_PROGRAM_VALUE_BOOL:
        fprintf(out, "%d", payload->u.b ? 1 : 0);
        return;
      case LOOM_PROGRAM_VALUE_I32:
        fprintf(out, "%" PRId32, payload->u.i32);
        return;
      case LOOM_PROGRAM_VALUE_I64:
        fprintf(out, "%" PRId64, payload->u.i64);
        return;
      case LOOM_PROGRAM_VALUE_F32:
        fprintf(out, "%e", (double)payload->u.f32);
        return;
      case LOOM_PROGRAM_VALUE_F64:
        fprintf(out, "%e", payload->u.f64);
        return;
      default:
        break;
    }
  }
  fprintf(out, "%s value", name);
}

// Runs one function without arguments to completion; prints its results
// when `print`.
static loom_status_t run_one(loom_program_executor_t* executor,
                             const program_binding_t* binding,
                             const program_function_t* function, bool print) {
  FILE* out = executor->output;
  int32_t n = function->num_results;
  program_value_vector_t result_values;
  program_value_vector_initialize(&result_values);
  LOOM_RETURN_IF_ERROR(program_value_vector_resize(
      &result_values, executor->allocator, (size_t)n));
  loom_async_value_t** results = program_value_vector_data(&result_values);
  loom_status_t status = loom_ok_status();
  int32_t created = 0;
  for (; created < n; ++created) {
    status = loom_program_value_create(executor->allocator, &results[created]);
    if (status) break;
  }
  if (!status) {
    if (print) {
      fprintf(out, "--- Running '%s':\n", function->name);
      fflush(out);
    }
    loom_status_free(loom__program_call(executor, binding, function, NULL, NULL,
                                        NULL, results));
    status = loom_host_context_await(executor->host, results, (size_t)n);
  }
  if (!status && print && n > 0) {
    fprintf(out, "'%s' returned ", function->name);
    for (int32_t i = 0; i < n; ++i) {
      if (i) fputc(',', out);
      print_result(out, function->result_types[i], results[i]);
    }
    fputc('\n', out);
    fflush(out);
  }
  // Every function completes before the next one starts, and a
  // cancellation ends with it.
  loom_program_executor_quiesce(executor);
  loom_host_context_restart(executor->host);
  for (int32_t i = 0; i < created; ++i) loom_async_value_release(results[i]);
  program_value_vector_deinitialize(&result_values, executor->allocator);
  return status;
}

static loom_status_t find(const loom_program_t* program, const char* name,
                          const program_function_t** out) {
  *out = loom__program_find_function(program, name, strlen(name));
  if (!*out) {
    return loom_make_status(LOOM_STATUS_NOT_FOUND,
                            "%s: couldn't find function '%s'",
                            program->file_name, name);
  }
  return loom_ok_status();
}

loom_status_t loom_program_executor_run_all(
    loom_program_executor_t* executor, const loom_program_t* program,
    const loom_program_run_options_t* options) {
  if (!executor || !program) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_program_executor_run_all: %s is NULL",
                            !executor ? "executor" : "program");
  }
  loom_program_run_options_t defaults;
  loom_program_run_options_initialize(&defaults);
  if (!options || options->struct_size < sizeof(*options)) options = &defaults;
  // Every named function must exist before anything runs.
  const program_function_t* init = NULL;
  if (options->test_init_function && *options->test_init_function) {
    LOOM_RETURN_IF_ERROR(find(program, options->test_init_function, &init));
    if (init->num_arguments > 0) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "%s: the init function '%s' takes arguments",
                              program->file_name, init->name);
    }
  }
  for (int32_t i = 0; i < options->num_functions; ++i) {
    const program_function_t* function = NULL;
    LOOM_RETURN_IF_ERROR(find(program, options->functions[i], &function));
  }
  program_binding_t* binding = NULL;
  LOOM_RETURN_IF_ERROR(loom__program_bind(executor, program, &binding));
  if (init) LOOM_RETURN_IF_ERROR(run_one(executor, binding, init, false));
  int32_t count =
      options->functions ? options->num_functions : program->num_functions;
  for (int32_t i = 0; i < count; ++i) {
    const program_function_t* function = program->functions[i];
    if (options->functions) {
      LOOM_RETURN_IF_ERROR(find(program, options->functions[i], &function));
    }
    if (function == init) continue;
    if (function->num_arguments > 0) {
      fprintf(executor->output,
              "--- Not running '%s' because it has arguments.\n",
              function->name);
      fflush(executor->output);
      continue;
    }
    LOOM_RETURN_IF_ERROR(run_one(executor, binding, function, true));
  }
  return loom_ok_status();
}
