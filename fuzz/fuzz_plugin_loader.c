// libFuzzer target for what a plugin does while it loads: op and kernel
// registrations through TensorFlow's C API (TF_NewOpDefinitionBuilder,
// TF_RegisterOpDefinition, TF_NewKernelBuilder, TF_RegisterKernelBuilder)
// and Loom's native builders, recorded on a registration journal as
// loom_plugin_load records them (src/registry/registration_journal.c), then
// rolled back.
//
// The input is a script, one command a line (first byte the command, the
// rest its argument):
//   O<name>   start a TF op builder (the previous builder is registered)
//   N<name>   start a native op builder (loom_op_def_builder_create)
//   <spec     add an input     >spec  add an output     @spec  add an attr
//   F<digits> set flags: 1 commutative, 2 aggregate, 3 stateful, 4 allows
//             uninitialized input (a digit's absence clears it)
//   S<digit>  a shape function (see kShapeFns)
//   D<n> <explanation>  deprecate at version n
//   R         register the builder        X  delete it instead
//   K<op>[ <device>]   start a kernel builder (k: an asynchronous one), its
//             functions chosen by the op name's length (see kComputeFns)
//   T<attr> <dtype number>  a type constraint     H<arg>  host memory
//   P<int>    priority        L<label>  label
//   G<kernel name>     register the kernel builder
//   E<op>     run the op with TFE_Execute (float inputs of shape [2])
//   Z         roll the journal back now (registration goes on after)
// Everything runs under one journal, as a plugin's entry points do, and is
// rolled back at the end whether or not a registration failed (a kept op
// would change how later inputs behave). Checks:
//   - every registration call that fails is recorded on the journal;
//   - after the rollback the op registry has the ops it had before, and
//     the kernel registry as many kernels for every op the script named;
//   - nothing crashes, trips a sanitizer or leaks.
// Names the script registers are best kept to a few (FuzzA, FuzzB, ...):
// registering one again in a later input, after its rollback, is a case
// worth having (caches that outlive a registration).
//
// The registries keep what was unregistered (pointers handed out stay
// valid), so a long run grows and slows down as it goes: scripts/fuzz.sh
// runs this fuzzer in libFuzzer's fork mode, whose processes are short.

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loom/builtin_ops.h"
#include "loom/kernel.h"
#include "loom/op_def.h"
#include "registry/op_registry_internal.h"
#include "tensorflow/c/eager/c_api.h"
#include "tensorflow/c/kernels.h"
#include "tensorflow/c/ops.h"
#include "tensorflow/c/tf_tensor.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
int LLVMFuzzerInitialize(int* argc, char*** argv);

//===----------------------------------------------------------------------===//
// Shape functions and kernels a script can pick
//===----------------------------------------------------------------------===//

static void shape_unknown(TF_ShapeInferenceContext* ctx, TF_Status* status) {
  TF_ShapeInferenceContextSetUnknownShape(ctx, status);
}

static void shape_scalar(TF_ShapeInferenceContext* ctx, TF_Status* status) {
  TF_ShapeHandle* scalar = TF_ShapeInferenceContextScalar(ctx);
  TF_ShapeInferenceContextSetOutput(ctx, 0, scalar, status);
  TF_DeleteShapeHandle(scalar);
}

// Every output gets input 0's shape (an error without an input 0).
static void shape_input0(TF_ShapeInferenceContext* ctx, TF_Status* status) {
  TF_ShapeHandle* shape = TF_NewShapeHandle();
  TF_ShapeInferenceContextGetInput(ctx, 0, shape, status);
  for (int i = 0; TF_GetCode(status) == TF_OK && i < 8; ++i) {
    TF_ShapeInferenceContextSetOutput(ctx, i, shape, status);
    if (TF_GetCode(status) != TF_OK && i > 0) TF_SetStatus(status, TF_OK, "");
    if (i > 0) break;
  }
  TF_DeleteShapeHandle(shape);
}

static void shape_fails(TF_ShapeInferenceContext* ctx, TF_Status* status) {
  (void)ctx;
  TF_SetStatus(status, TF_INVALID_ARGUMENT, "fuzzed shape function fails");
}

// Output 99 and input -1, which no op has.
static void shape_bad_index(TF_ShapeInferenceContext* ctx, TF_Status* status) {
  TF_ShapeHandle* shape = TF_NewShapeHandle();
  TF_ShapeInferenceContextGetInput(ctx, -1, shape, status);
  TF_SetStatus(status, TF_OK, "");
  TF_ShapeInferenceContextSetOutput(ctx, 99, shape, status);
  TF_DeleteShapeHandle(shape);
}

typedef void (*shape_fn_t)(TF_ShapeInferenceContext*, TF_Status*);
static const shape_fn_t kShapeFns[] = {
    shape_unknown, shape_scalar, shape_input0, shape_fails, shape_bad_index};

static void* create_state(TF_OpKernelConstruction* ctx) {
  (void)ctx;
  return malloc(16);  // freed by delete_state: a leak if it is not called
}

static void* create_fails(TF_OpKernelConstruction* ctx) {
  TF_Status* status = TF_NewStatus();
  TF_SetStatus(status, TF_FAILED_PRECONDITION, "fuzzed kernel refuses");
  TF_OpKernelConstruction_Failure(ctx, status);
  TF_DeleteStatus(status);
  return NULL;
}

static void delete_state(void* state) {
  free(state);
}

// Every output is input 0, whatever their dtypes.
static void compute_forward(void* state, TF_OpKernelContext* ctx) {
  (void)state;
  TF_Status* status = TF_NewStatus();
  TF_Tensor* input = NULL;
  TF_GetInput(ctx, 0, &input, status);
  for (int i = 0; input && i < TF_NumOutputs(ctx); ++i) {
    TF_SetOutput(ctx, i, input, status);
  }
  if (input) TF_DeleteTensor(input);
  TF_DeleteStatus(status);
}

// Every output a zeroed [2] of its expected dtype.
static void compute_allocate(void* state, TF_OpKernelContext* ctx) {
  (void)state;
  TF_Status* status = TF_NewStatus();
  for (int i = 0; i < TF_NumOutputs(ctx); ++i) {
    TF_DataType dtype = TF_ExpectedOutputDataType(ctx, i);
    int64_t dims[1] = {2};
    TF_Tensor* output = TF_AllocateOutput(ctx, i, dtype, dims, 1,
                                          2 * TF_DataTypeSize(dtype), status);
    if (output) {
      if (TF_TensorData(output)) {
        memset(TF_TensorData(output), 0, TF_TensorByteSize(output));
      }
      TF_DeleteTensor(output);
    }
  }
  TF_DeleteStatus(status);
}

static void compute_fails(void* state, TF_OpKernelContext* ctx) {
  (void)state;
  TF_Status* status = TF_NewStatus();
  TF_SetStatus(status, TF_INTERNAL, "fuzzed kernel fails");
  TF_OpKernelContext_Failure(ctx, status);
  TF_DeleteStatus(status);
}

// Sets no output at all, and asks for inputs and outputs that are not there.
static void compute_nothing(void* state, TF_OpKernelContext* ctx) {
  (void)state;
  TF_Status* status = TF_NewStatus();
  TF_Tensor* input = NULL;
  TF_GetInput(ctx, TF_NumInputs(ctx), &input, status);
  if (input) TF_DeleteTensor(input);
  (void)TF_InputDatatype(ctx, -1);
  (void)TF_ExpectedOutputDataType(ctx, TF_NumOutputs(ctx));
  TF_DeleteStatus(status);
}

static void compute_async(void* state, TF_OpKernelContext* ctx,
                          TF_AsyncOpKernelDoneCallback* done) {
  compute_allocate(state, ctx);
  TF_RunAsyncOpKernelDoneCallback(done);
}

typedef void (*compute_fn_t)(void*, TF_OpKernelContext*);
static const compute_fn_t kComputeFns[] = {compute_forward, compute_allocate,
                                           compute_fails, compute_nothing};

//===----------------------------------------------------------------------===//
// The script
//===----------------------------------------------------------------------===//

#define MAX_NAMES 32

typedef struct script_t {
  loom__registration_journal_t* journal;
  TF_Status* status;
  TF_OpDefinitionBuilder* tf_builder;
  loom_op_def_builder_t* native_builder;
  TF_KernelBuilder* kernel_builder;
  TFE_Context* context;  // made by the first E
  // The op names the script mentions: whether each was registered before
  // the script, and its kernel count then.
  char* names[MAX_NAMES];
  bool existed[MAX_NAMES];
  size_t kernels[MAX_NAMES];
  int num_names;
} script_t;

// A failing registration call must leave its error on the journal.
static void check_recorded(const script_t* s, bool failed, const char* what) {
  if (failed && !s->journal->failure) {
    fprintf(stderr,
            "fuzz_plugin_loader: %s failed but the journal has no "
            "failure\n",
            what);
    abort();
  }
}

static void note_name(script_t* s, const char* name) {
  if (s->num_names == MAX_NAMES) return;
  for (int i = 0; i < s->num_names; ++i) {
    if (strcmp(s->names[i], name) == 0) return;
  }
  size_t length = strlen(name);
  char* copy = malloc(length + 1);
  if (!copy) abort();
  memcpy(copy, name, length + 1);
  s->names[s->num_names] = copy;
  s->existed[s->num_names] =
      loom_op_registry_find(loom_op_registry_global(), name) != NULL;
  s->kernels[s->num_names] =
      loom_kernel_registry_count(loom_kernel_registry_global(), name);
  ++s->num_names;
}

static void finish_op_builder(script_t* s, bool register_it) {
  if (s->tf_builder) {
    if (register_it) {
      TF_RegisterOpDefinition(s->tf_builder, s->status);
      check_recorded(s, TF_GetCode(s->status) != TF_OK,
                     "TF_RegisterOpDefinition");
    } else {
      TF_DeleteOpDefinitionBuilder(s->tf_builder);
    }
    s->tf_builder = NULL;
  }
  if (s->native_builder) {
    if (register_it) {
      loom_status_t status = loom_op_registry_register(
          loom_op_registry_global(), s->native_builder);
      check_recorded(s, status != NULL, "loom_op_registry_register");
      loom_status_free(status);
    } else {
      loom_op_def_builder_destroy(s->native_builder);
    }
    s->native_builder = NULL;
  }
}

static void add_spec(script_t* s, char kind, const char* spec) {
  if (s->tf_builder) {
    if (kind == '<') TF_OpDefinitionBuilderAddInput(s->tf_builder, spec);
    if (kind == '>') TF_OpDefinitionBuilderAddOutput(s->tf_builder, spec);
    if (kind == '@') TF_OpDefinitionBuilderAddAttr(s->tf_builder, spec);
  } else if (s->native_builder) {
    loom_status_t status = NULL;
    if (kind == '<') {
      status = loom_op_def_builder_add_input(s->native_builder, spec);
    } else if (kind == '>') {
      status = loom_op_def_builder_add_output(s->native_builder, spec);
    } else {
      status = loom_op_def_builder_add_attr(s->native_builder, spec);
    }
    loom_status_free(status);
  }
}

static void set_flags(script_t* s, const char* flags) {
  bool set[5] = {false};
  for (const char* c = flags; *c; ++c) {
    if (*c >= '1' && *c <= '4') set[*c - '0'] = true;
  }
  if (s->tf_builder) {
    TF_OpDefinitionBuilderSetIsCommutative(s->tf_builder, set[1]);
    TF_OpDefinitionBuilderSetIsAggregate(s->tf_builder, set[2]);
    TF_OpDefinitionBuilderSetIsStateful(s->tf_builder, set[3]);
    TF_OpDefinitionBuilderSetAllowsUninitializedInput(s->tf_builder, set[4]);
  } else if (s->native_builder) {
    loom_op_def_builder_set_is_commutative(s->native_builder, set[1]);
    loom_op_def_builder_set_is_aggregate(s->native_builder, set[2]);
    loom_op_def_builder_set_is_stateful(s->native_builder, set[3]);
    loom_op_def_builder_set_allows_uninitialized_input(s->native_builder,
                                                       set[4]);
  }
}

static void deprecate(script_t* s, const char* argument) {
  char* end = NULL;
  long version = strtol(argument, &end, 10);
  if (version > INT32_MAX) version = INT32_MAX;
  if (version < INT32_MIN) version = INT32_MIN;
  const char* explanation = *end == ' ' ? end + 1 : end;
  if (s->tf_builder) {
    TF_OpDefinitionBuilderDeprecated(s->tf_builder, (int)version, explanation);
  } else if (s->native_builder) {
    loom_status_free(loom_op_def_builder_set_deprecated(
        s->native_builder, (int)version, explanation));
  }
}

static void start_kernel(script_t* s, const char* argument, bool async) {
  if (s->kernel_builder) TF_DeleteKernelBuilder(s->kernel_builder);
  char op[256];
  snprintf(op, sizeof(op), "%s", argument);
  const char* device = "CPU";
  char* space = strchr(op, ' ');
  if (space) {
    *space = '\0';
    device = space + 1;
  }
  note_name(s, op);
  size_t pick = strlen(op);
  void* (*create)(TF_OpKernelConstruction*) =
      pick % 3 == 0 ? NULL : (pick % 3 == 1 ? create_state : create_fails);
  void (*destroy)(void*) =
      create == create_state || pick % 5 == 0 ? delete_state : NULL;
  if (async) {
    s->kernel_builder =
        TF_NewAsyncKernelBuilder(op, device, create, compute_async, destroy);
  } else {
    s->kernel_builder =
        TF_NewKernelBuilder(op, device, create, kComputeFns[pick % 4], destroy);
  }
}

static void type_constraint(script_t* s, const char* argument) {
  if (!s->kernel_builder) return;
  char attr[256];
  snprintf(attr, sizeof(attr), "%s", argument);
  int dtype = 1;
  char* space = strrchr(attr, ' ');
  if (space) {
    *space = '\0';
    dtype = atoi(space + 1);
  }
  TF_KernelBuilder_TypeConstraint(s->kernel_builder, attr, (TF_DataType)dtype,
                                  s->status);
  check_recorded(s, TF_GetCode(s->status) != TF_OK,
                 "TF_KernelBuilder_TypeConstraint");
}

static void register_kernel(script_t* s, const char* name) {
  if (!s->kernel_builder) return;
  TF_RegisterKernelBuilder(name, s->kernel_builder, s->status);
  s->kernel_builder = NULL;
  check_recorded(s, TF_GetCode(s->status) != TF_OK, "TF_RegisterKernelBuilder");
}

// Runs `name` on float [2] inputs, as many as its definition has
// arguments; the outputs are resolved and freed.
static void execute(script_t* s, const char* name) {
  const loom_op_def_t* def =
      loom_op_registry_find(loom_op_registry_global(), name);
  if (!def) return;
  if (!s->context) {
    TFE_ContextOptions* options = TFE_NewContextOptions();
    s->context = TFE_NewContext(options, s->status);
    TFE_DeleteContextOptions(options);
    if (!s->context) abort();
  }
  TFE_Op* op = TFE_NewOp(s->context, name, s->status);
  if (!op) return;
  int64_t dims[1] = {2};
  TF_Tensor* tensor = TF_AllocateTensor(TF_FLOAT, dims, 1, 2 * sizeof(float));
  if (!tensor) abort();
  memset(TF_TensorData(tensor), 0, 2 * sizeof(float));
  TFE_TensorHandle* input = TFE_NewTensorHandle(tensor, s->status);
  TF_DeleteTensor(tensor);
  if (!input) abort();
  for (int32_t i = 0; i < def->num_inputs && i < 8; ++i) {
    TFE_OpAddInput(op, input, s->status);
  }
  TFE_TensorHandle* retvals[16];
  int num_retvals = 16;
  TFE_Execute(op, retvals, &num_retvals, s->status);
  if (TF_GetCode(s->status) != TF_OK) num_retvals = 0;
  for (int i = 0; i < num_retvals; ++i) {
    TF_Tensor* resolved = TFE_TensorHandleResolve(retvals[i], s->status);
    if (resolved) TF_DeleteTensor(resolved);
    TFE_DeleteTensorHandle(retvals[i]);
  }
  TFE_DeleteTensorHandle(input);
  TFE_DeleteOp(op);
}

static void run_command(script_t* s, char command, const char* argument) {
  switch (command) {
    case 'O':
    case 'N':
      finish_op_builder(s, true);
      note_name(s, argument);
      if (command == 'O') {
        s->tf_builder = TF_NewOpDefinitionBuilder(argument);
      } else {
        loom_status_free(loom_op_def_builder_create(
            loom_allocator_system(), argument, &s->native_builder));
      }
      break;
    case '<':
    case '>':
    case '@':
      add_spec(s, command, argument);
      break;
    case 'F':
      set_flags(s, argument);
      break;
    case 'S':
      if (s->tf_builder) {
        TF_OpDefinitionBuilderSetShapeInferenceFunction(
            s->tf_builder,
            kShapeFns[(unsigned char)argument[0] %
                      (sizeof(kShapeFns) / sizeof(kShapeFns[0]))]);
      }
      break;
    case 'D':
      deprecate(s, argument);
      break;
    case 'R':
      finish_op_builder(s, true);
      break;
    case 'X':
      finish_op_builder(s, false);
      break;
    case 'K':
    case 'k':
      start_kernel(s, argument, command == 'k');
      break;
    case 'T':
      type_constraint(s, argument);
      break;
    case 'H':
      if (s->kernel_builder) {
        TF_KernelBuilder_HostMemory(s->kernel_builder, argument);
      }
      break;
    case 'P':
      if (s->kernel_builder) {
        TF_KernelBuilder_Priority(s->kernel_builder, atoi(argument));
      }
      break;
    case 'L':
      if (s->kernel_builder) {
        TF_KernelBuilder_Label(s->kernel_builder, argument);
      }
      break;
    case 'G':
      register_kernel(s, argument);
      break;
    case 'E':
      finish_op_builder(s, true);
      execute(s, argument);
      break;
    case 'Z':
      loom__registration_journal_rollback(s->journal);
      break;
    default:
      break;
  }
}

// After the rollback: what existed before exists, nothing else does, and
// every op named has the kernels it had.
static void check_rolled_back(const script_t* s, size_t ops_before) {
  loom_op_registry_t* ops = loom_op_registry_global();
  size_t ops_after = loom_op_registry_list(ops, NULL, 0);
  if (ops_after != ops_before) {
    fprintf(stderr,
            "fuzz_plugin_loader: %zu ops before, %zu after the "
            "rollback\n",
            ops_before, ops_after);
    abort();
  }
  for (int i = 0; i < s->num_names; ++i) {
    bool exists = loom_op_registry_find(ops, s->names[i]) != NULL;
    size_t kernels =
        loom_kernel_registry_count(loom_kernel_registry_global(), s->names[i]);
    if (exists != s->existed[i] || kernels != s->kernels[i]) {
      fprintf(stderr,
              "fuzz_plugin_loader: after the rollback op '%s' %s "
              "(before: %s) with %zu kernels (before: %zu)\n",
              s->names[i], exists ? "exists" : "is gone",
              s->existed[i] ? "existed" : "did not", kernels, s->kernels[i]);
      abort();
    }
  }
}

int LLVMFuzzerInitialize(int* argc, char*** argv) {
  (void)argc;
  (void)argv;
  loom_status_t status = loom_builtin_ops_register();
  if (status) {
    fprintf(stderr, "fuzz_plugin_loader: %s\n", loom_status_message(status));
    abort();
  }
  // The first context registers the call and control-flow ops, which are
  // the process's and stay after a rollback (test_plugin_first_context):
  // made here, they are there before every script counts the ops.
  TF_Status* tf_status = TF_NewStatus();
  TFE_ContextOptions* options = TFE_NewContextOptions();
  TFE_Context* context = TFE_NewContext(options, tf_status);
  TFE_DeleteContextOptions(options);
  if (!context) {
    fprintf(stderr, "fuzz_plugin_loader: %s\n", TF_Message(tf_status));
    abort();
  }
  TFE_DeleteContext(context);
  TF_DeleteStatus(tf_status);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  char* text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';

  size_t ops_before = loom_op_registry_list(loom_op_registry_global(), NULL, 0);
  loom__registration_journal_t journal;
  loom__registration_journal_initialize(&journal, loom_allocator_system());
  script_t script;
  memset(&script, 0, sizeof(script));
  script.journal = &journal;
  script.status = TF_NewStatus();
  loom__registration_journal_t* previous =
      loom__registration_journal_swap(&journal);
  int commands = 0;
  for (char* line = text; line && commands < 64; ++commands) {
    char* next = strchr(line, '\n');
    if (next) *next++ = '\0';
    if (line[0]) run_command(&script, line[0], line + 1);
    line = next;
  }
  finish_op_builder(&script, true);
  if (script.kernel_builder) TF_DeleteKernelBuilder(script.kernel_builder);
  loom__registration_journal_swap(previous);
  // Contexts may hold kernels of ops about to go: they go first, as a
  // plugin's failed load happens before any op of it runs.
  if (script.context) TFE_DeleteContext(script.context);

  loom__registration_journal_rollback(&journal);
  loom__registration_journal_deinitialize(&journal);
  check_rolled_back(&script, ops_before);
  for (int i = 0; i < script.num_names; ++i) free(script.names[i]);
  TF_DeleteStatus(script.status);
  free(text);
  return 0;
}
