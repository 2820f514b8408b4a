// loom: runs programs written in the MLIR text form of TFRT's core-runtime
// dialects on Loom, printing what TFRT's bef_executor prints.

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "loom/host_context.h"
#include "loom/program.h"
#include "loom/program_kernel.h"

static const char kUsage[] =
    "usage: loom run [options] <file.mlir | ->\n"
    "       loom check <file.mlir | ->\n"
    "       loom --help | --version\n"
    "\n"
    "Runs programs written in the MLIR text form of TFRT's tfrt and corert\n"
    "dialects (func.func, tfrt.*, corert.executeop, ...) on Loom's core\n"
    "runtime, printing what TFRT's bef_executor prints: \"--- Running 'f':\"\n"
    "before each function, \"'f' returned ...\" after one with results, and\n"
    "runtime errors on stderr as \"file:line:col: error: runtime error: "
    "...\".\n"
    "\n"
    "commands:\n"
    "  run FILE                  parse FILE and run its functions in file "
    "order\n"
    "  check FILE                parse FILE only and report its syntax errors\n"
    "\n"
    "options:\n"
    "  --functions=F,G           run only these functions, in this order\n"
    "  --test_init_function=F    run F first, without its banner, then the "
    "others\n"
    "  --verify-diagnostics      check the program's `// expected-error "
    "{{...}}`\n"
    "                            annotations against the errors instead of\n"
    "                            printing them\n"
    "  --plugin=PATH             load a plugin (repeatable): kernels and cpu "
    "ops\n"
    "                            (loom_program_plugin_init) or TensorFlow ops "
    "and\n"
    "                            kernels (TF_InitPlugin / TF_InitKernel);\n"
    "                            --shared_libs=A,B is the same\n"
    "  --threads=N               worker threads (default: one per core but\n"
    "                            one; the main thread runs ops too)\n"
    "  --split-input-file        treat each part of FILE between `// -----` "
    "lines\n"
    "                            as a program of its own (both commands)\n"
    "  --timing                  print the parse and run times to stderr\n"
    "  --devices=cpu,null        bef_executor's: the op handlers the program\n"
    "                            finds by name (Loom's runtime has both)\n"
    "  --work_queue_type=T       bef_executor's: s (single-threaded, as\n"
    "                            --threads=0) or mstd[:N[,M]] (N threads)\n"
    "  --host_allocator_type=A   bef_executor's; accepted, Loom's allocator\n"
    "                            serves every program\n"
    "  --max-call-depth=N        deepest nesting of function calls (default\n"
    "                            10000)\n"
    "  --max-calls-in-flight=N   most function calls started and not yet\n"
    "                            finished (default 100000); a program "
    "beyond\n"
    "                            either limit stops with one error and its\n"
    "                            call stack\n"
    "\n"
    "Ops named \"tf.X\" in corert.executeop run Loom's op X. Exit status: 0 "
    "when\n"
    "the program ran without errors (with --verify-diagnostics: when the\n"
    "errors matched the annotations), 1 otherwise, 2 for a usage error.\n";

typedef struct options_t {
  const char* command;
  const char* file;
  const char** functions;
  int num_functions;
  const char* test_init_function;
  bool verify;
  const char** plugins;
  int num_plugins;
  int threads;
  bool single_threaded;     // --work_queue_type=s
  int max_call_depth;       // 0: the executor's default
  int max_calls_in_flight;  // 0: the executor's default
  bool timing;
  bool split_input_file;
  char** copies;  // the split lists' storage
  int num_copies;
} options_t;

typedef struct cli_t {
  const char* file;
  loom_program_verifier_t* verifier;  // NULL unless verifying
  int errors;
  bool failed;  // something other than the program's diagnostics failed
} cli_t;

// A status's message; for one made without (there was no memory for the
// message) its code and why.
static const char* status_text(loom_status_t status) {
  const char* message = loom_status_message(status);
  if (*message) return message;
  return loom_status_code(status) == LOOM_STATUS_RESOURCE_EXHAUSTED
             ? "RESOURCE_EXHAUSTED: out of memory (no memory was left for "
               "the error's message)"
             : loom_status_code_name(loom_status_code(status));
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int usage_error(const char* format, const char* what) {
  fprintf(stderr, "loom: ");
  fprintf(stderr, format, what);
  fprintf(stderr, "\n(loom --help for usage)\n");
  return 2;
}

static void free_options(options_t* options) {
  for (int i = 0; i < options->num_copies; ++i) free(options->copies[i]);
  free(options->copies);
  free(options->functions);
  free(options->plugins);
}

// Splits a comma-separated list into `list` (appending).
static bool append_list(options_t* options, const char* text,
                        const char*** list, int* count) {
  char** copies = realloc(options->copies,
                          sizeof(char*) * (size_t)(options->num_copies + 1));
  if (!copies) return false;
  options->copies = copies;
  char* copy = strdup(text);
  if (!copy) return false;
  options->copies[options->num_copies++] = copy;
  char* saved = NULL;
  for (char* item = strtok_r(copy, ",", &saved); item;
       item = strtok_r(NULL, ",", &saved)) {
    const char** grown = realloc(*list, sizeof(char*) * (size_t)(*count + 1));
    if (!grown) return false;
    *list = grown;
    (*list)[(*count)++] = item;
  }
  return true;
}

// The value of `name=value` or `name value` (arg is the option with its
// leading dashes removed).
static const char* option_value(const char* arg, int argc, char** argv, int* i,
                                const char* name) {
  size_t length = strlen(name);
  if (strncmp(arg, name, length) != 0) return NULL;
  if (arg[length] == '=') return arg + length + 1;
  if (arg[length] == '\0' && *i + 1 < argc) return argv[++*i];
  return NULL;
}

// A decimal number in [minimum, maximum].
static bool parse_count(const char* text, long minimum, long maximum,
                        int* out) {
  char* end = NULL;
  errno = 0;
  long value = strtol(text, &end, 10);
  if (!*text || *end || errno || value < minimum || value > maximum) {
    return false;
  }
  *out = (int)value;
  return true;
}

// bef_executor's --devices: the op handlers a program finds by name, of
// which Loom's runtime has "cpu" and "null" always. NULL when every name is
// one of them, else the first other (cut at the comma in `buffer`).
static const char* unknown_device(const char* list, char* buffer,
                                  size_t capacity) {
  const char* at = list;
  for (;;) {
    const char* comma = strchr(at, ',');
    size_t length = comma ? (size_t)(comma - at) : strlen(at);
    bool known = (length == 3 && strncmp(at, "cpu", 3) == 0) ||
                 (length == 4 && strncmp(at, "null", 4) == 0);
    if (!known) {
      snprintf(buffer, capacity, "%.*s", (int)length, at);
      return buffer;
    }
    if (!comma) return NULL;
    at = comma + 1;
  }
}

// bef_executor's --work_queue_type: s, mstd, mstd:N or mstd:N,M (N
// threads; M, its blocking threads, is Loom's business).
static bool parse_work_queue(const char* text, options_t* options) {
  if (strcmp(text, "s") == 0) {
    options->single_threaded = true;
    return true;
  }
  if (strncmp(text, "mstd", 4) != 0) return false;
  if (text[4] == '\0') return true;
  if (text[4] != ':') return false;
  char count[16];
  const char* comma = strchr(text + 5, ',');
  size_t length = comma ? (size_t)(comma - (text + 5)) : strlen(text + 5);
  if (length == 0 || length >= sizeof(count)) return false;
  memcpy(count, text + 5, length);
  count[length] = '\0';
  int blocking = 0;
  if (comma && !parse_count(comma + 1, 1, 1024, &blocking)) return false;
  return parse_count(count, 1, 1024, &options->threads);
}

static int parse_arguments(int argc, char** argv, options_t* options) {
  for (int i = 1; i < argc; ++i) {
    const char* arg = argv[i];
    if (arg[0] != '-' || arg[1] == '\0') {  // a word, or "-" (stdin)
      if (!options->command) {
        // The first word is the command.
        if (strcmp(arg, "run") != 0 && strcmp(arg, "check") != 0) {
          return usage_error("unknown command '%s'; commands: run, check", arg);
        }
        options->command = arg;
      } else if (!options->file) {
        options->file = arg;
      } else {
        return usage_error("unexpected argument '%s'", arg);
      }
      continue;
    }
    // -name and --name are the same option (as in MLIR's tools).
    const char* name = arg + (arg[1] == '-' ? 2 : 1);
    const char* value = NULL;
    if (strcmp(name, "help") == 0 || strcmp(name, "h") == 0) {
      fputs(kUsage, stdout);
      return -1;
    }
    if (strcmp(name, "version") == 0) {
      printf("loom 0.1.0\n");
      return -1;
    }
    if ((value = option_value(name, argc, argv, &i, "functions"))) {
      if (!append_list(options, value, &options->functions,
                       &options->num_functions)) {
        return usage_error("%s", "out of memory");
      }
    } else if ((value =
                    option_value(name, argc, argv, &i, "test_init_function"))) {
      options->test_init_function = value;
    } else if ((value = option_value(name, argc, argv, &i, "plugin")) ||
               (value = option_value(name, argc, argv, &i, "shared_libs"))) {
      if (!append_list(options, value, &options->plugins,
                       &options->num_plugins)) {
        return usage_error("%s", "out of memory");
      }
    } else if ((value = option_value(name, argc, argv, &i, "threads"))) {
      if (!parse_count(value, 0, 1024, &options->threads)) {
        return usage_error("--threads needs a number in [0, 1024], got '%s'",
                           value);
      }
    } else if ((value = option_value(name, argc, argv, &i, "max-call-depth"))) {
      if (!parse_count(value, 1, INT32_MAX, &options->max_call_depth)) {
        return usage_error(
            "--max-call-depth needs a number in [1, 2147483647], got '%s'",
            value);
      }
    } else if ((value = option_value(name, argc, argv, &i,
                                     "max-calls-in-flight"))) {
      if (!parse_count(value, 1, INT32_MAX, &options->max_calls_in_flight)) {
        return usage_error(
            "--max-calls-in-flight needs a number in [1, 2147483647], got "
            "'%s'",
            value);
      }
    } else if ((value = option_value(name, argc, argv, &i, "devices"))) {
      char device[64];
      const char* unknown = unknown_device(value, device, sizeof(device));
      if (unknown) {
        return usage_error(
            "--devices: no op handler '%s'; Loom's runtime has cpu and null "
            "(register others in a --test_init_function)",
            unknown);
      }
    } else if ((value =
                    option_value(name, argc, argv, &i, "work_queue_type"))) {
      if (!parse_work_queue(value, options)) {
        return usage_error(
            "--work_queue_type needs s or mstd[:N[,M]] with N and M in [1, "
            "1024], got '%s'",
            value);
      }
    } else if (option_value(name, argc, argv, &i, "host_allocator_type")) {
      // Accepted for bef_executor's command lines.
    } else if (strcmp(name, "verify-diagnostics") == 0) {
      options->verify = true;
    } else if (strcmp(name, "timing") == 0) {
      options->timing = true;
    } else if (strcmp(name, "split-input-file") == 0) {
      options->split_input_file = true;
    } else {
      return usage_error("unknown option '%s'", arg);
    }
  }
  if (!options->command) {
    return usage_error("%s", "no command; commands: run, check");
  }
  if (!options->file) return usage_error("%s", "no input file");
  return 0;
}

static bool read_file(const char* path, char** out_text, size_t* out_size) {
  FILE* file = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
  if (!file) return false;
  size_t capacity = 1 << 16;
  size_t size = 0;
  char* text = malloc(capacity);
  while (text) {
    size_t n = fread(text + size, 1, capacity - size, file);
    size += n;
    if (size < capacity) break;
    char* grown = realloc(text, capacity * 2);
    if (!grown) {
      free(text);
      text = NULL;
      break;
    }
    text = grown;
    capacity *= 2;
  }
  bool ok = text && !ferror(file);
  if (file != stdin) fclose(file);
  if (!ok) {
    free(text);
    return false;
  }
  *out_text = text;
  *out_size = size;
  return true;
}

// Prints a diagnostic, or checks it against the annotations.
static void diagnose(void* user_data,
                     const loom_program_diagnostic_t* diagnostic) {
  cli_t* cli = user_data;
  cli->errors++;
  if (cli->verifier) {
    loom_program_verifier_check(cli->verifier, diagnostic);
    return;
  }
  fflush(stdout);
  fprintf(stderr, "%s:%d:%d: error: %s\n", diagnostic->location.file,
          diagnostic->location.line, diagnostic->location.column,
          diagnostic->message);
  fflush(stderr);
}

// A parse error's status message is "file:line:col: error: what": the
// diagnostic is its "what" at line:col.
static void diagnose_parse_error(cli_t* cli, loom_status_t status,
                                 const loom_program_location_t* where) {
  const char* message = status_text(status);
  const char* what = strstr(message, ": error: ");
  loom_program_diagnostic_t diagnostic = {*where, what ? what + 9 : message};
  if (where->line == 0) {  // not a syntax error (out of memory)
    fprintf(stderr, "loom: error: %s\n", message);
    cli->errors++;
    return;
  }
  diagnose(cli, &diagnostic);
}

// Runs (or only parses, for `check`) one program: the whole file, or one
// chunk of it padded with newlines so that its lines keep their numbers.
static void run_text(const options_t* options, cli_t* cli,
                     loom_program_executor_t* executor, const char* text,
                     size_t size, double* parse_ms, double* run_ms,
                     int64_t* ops) {
  double start = now_ms();
  loom_program_t* program = NULL;
  loom_program_location_t where;
  loom_status_t status = loom_program_parse(loom_allocator_default(), cli->file,
                                            text, size, &program, &where);
  double parsed = now_ms();
  *parse_ms += parsed - start;
  if (status) {
    diagnose_parse_error(cli, status, &where);
    loom_status_free(status);
    return;
  }
  *ops += loom_program_op_count(program);
  if (executor) {
    loom_program_run_options_t run_options;
    loom_program_run_options_initialize(&run_options);
    run_options.functions = options->functions;
    run_options.num_functions = options->num_functions;
    run_options.test_init_function = options->test_init_function;
    status = loom_program_executor_run_all(executor, program, &run_options);
    // A program that cannot run (an unknown kernel) was reported at its
    // operations already.
    if (status && loom_status_code(status) == LOOM_STATUS_FAILED_PRECONDITION) {
      loom_status_free(status);
      status = loom_ok_status();
    }
    if (status) {
      fflush(stdout);
      fprintf(stderr, "loom: error: %s\n", status_text(status));
      loom_status_free(status);
      cli->errors++;
      cli->failed = true;
    }
    loom_program_executor_quiesce(executor);
  }
  *run_ms += now_ms() - parsed;
  loom_program_destroy(program);
}

// The start of the next chunk after `p`: the line after a `// -----` line.
static const char* find_split(const char* p, const char* end,
                              const char** out_marker) {
  while (p < end) {
    const char* line_end = memchr(p, '\n', (size_t)(end - p));
    if (!line_end) line_end = end;
    const char* q = p;
    while (q < line_end && (*q == ' ' || *q == '\t')) ++q;
    if (line_end - q >= 8 && memcmp(q, "// -----", 8) == 0) {
      *out_marker = p;
      return line_end < end ? line_end + 1 : end;
    }
    p = line_end < end ? line_end + 1 : end;
  }
  *out_marker = end;
  return end;
}

static int run(const options_t* options) {
  const char* file =
      strcmp(options->file, "-") == 0 ? "<stdin>" : options->file;
  char* text = NULL;
  size_t size = 0;
  if (!read_file(options->file, &text, &size)) {
    fprintf(stderr, "loom: error: cannot read '%s': %s\n", options->file,
            strerror(errno));
    return 1;
  }
  cli_t cli = {.file = file};
  loom_status_t status = loom_ok_status();
  if (options->verify) {
    status = loom_program_verifier_create(loom_allocator_default(), file, text,
                                          size, &cli.verifier);
    if (status) {
      fprintf(stderr, "%s\n", status_text(status));
      loom_status_free(status);
      free(text);
      return 1;
    }
  }
  loom_host_context_t* host = NULL;
  loom_program_executor_t* executor = NULL;
  if (strcmp(options->command, "run") == 0) {
    loom_host_context_options_t host_options;
    loom_host_context_options_initialize(&host_options);
    if (options->threads > 0) host_options.num_threads = options->threads;
    if (options->single_threaded) host_options.num_threads = 0;
    status = loom_host_context_create(&host_options, &host);
    loom_program_executor_options_t executor_options;
    loom_program_executor_options_initialize(&executor_options, host);
    executor_options.diagnostic_handler = diagnose;
    executor_options.diagnostic_user_data = &cli;
    executor_options.max_call_depth = options->max_call_depth;
    executor_options.max_calls_in_flight = options->max_calls_in_flight;
    if (!status) {
      status = loom_program_executor_create(&executor_options, &executor);
    }
    for (int i = 0; !status && i < options->num_plugins; ++i) {
      status = loom_program_executor_load_plugin(executor, options->plugins[i]);
    }
    if (status) {
      fprintf(stderr, "loom: error: %s\n", status_text(status));
      loom_status_free(status);
      cli.errors++;
      cli.failed = true;
    }
  }
  double parse_ms = 0;
  double run_ms = 0;
  int64_t ops = 0;
  if (!cli.failed && !options->split_input_file) {
    run_text(options, &cli, executor, text, size, &parse_ms, &run_ms, &ops);
  }
  const char* end = text + size;
  int32_t line = 1;
  for (const char* chunk = text;
       !cli.failed && options->split_input_file && chunk < end;) {
    const char* marker = NULL;
    const char* next = find_split(chunk, end, &marker);
    // Pad with the newlines before the chunk so that lines keep their
    // numbers.
    size_t length = (size_t)(marker - chunk);
    char* padded = malloc((size_t)line - 1 + length + 1);
    if (!padded) {
      fprintf(stderr, "loom: error: out of memory\n");
      cli.errors++;
      break;
    }
    memset(padded, '\n', (size_t)line - 1);
    memcpy(padded + line - 1, chunk, length);
    run_text(options, &cli, executor, padded, (size_t)line - 1 + length,
             &parse_ms, &run_ms, &ops);
    free(padded);
    for (const char* p = chunk; p < next; ++p) line += *p == '\n';
    chunk = next;
    if (next == end && marker == end) break;
  }
  free(text);
  loom_program_executor_destroy(executor);
  if (host) loom_host_context_destroy(host);
  if (options->timing) {
    fprintf(stderr, "loom: parsed %s in %.3f ms (%lld ops), ran in %.3f ms\n",
            file, parse_ms, (long long)ops, run_ms);
  }
  if (cli.verifier) {
    fflush(stdout);
    int failures = loom_program_verifier_finish(cli.verifier, stderr);
    loom_program_verifier_destroy(cli.verifier);
    // A failure that is not a diagnostic of the program (a plugin that does
    // not load, a function that does not exist) fails verification too.
    return failures || cli.failed ? 1 : 0;
  }
  return cli.errors ? 1 : 0;
}

int main(int argc, char** argv) {
  options_t options;
  memset(&options, 0, sizeof(options));
  int code = parse_arguments(argc, argv, &options);
  if (code == 0) code = run(&options);
  free_options(&options);
  return code < 0 ? 0 : code;
}
