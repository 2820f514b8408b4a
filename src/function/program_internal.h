// The in-memory form of a parsed program: functions of one block each, whose
// operations name their operands and results by value ids.
//
// Everything lives in the program's arena and is immutable after parsing;
// executors keep their per-program state (kernels, prepared ops) beside it,
// indexed by an operation's global index.

#ifndef LOOM_FUNCTION_PROGRAM_INTERNAL_H_
#define LOOM_FUNCTION_PROGRAM_INTERNAL_H_

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/hash_map.h"
#include "loom/dtype.h"
#include "loom/op_attrs.h"
#include "loom/program.h"

typedef enum program_type_kind_t {
  PROGRAM_TYPE_INTEGER = 0,  // iN, uiN, siN
  PROGRAM_TYPE_FLOAT,        // f16, bf16, f32, f64
  PROGRAM_TYPE_INDEX,
  PROGRAM_TYPE_NONE,
  PROGRAM_TYPE_COMPLEX,
  PROGRAM_TYPE_TENSOR,
  PROGRAM_TYPE_CHAIN,          // !tfrt.chain
  PROGRAM_TYPE_TENSOR_HANDLE,  // !corert.tensorhandle
  PROGRAM_TYPE_OP_HANDLER,     // !corert.ophandler
  PROGRAM_TYPE_OP_ATTRS,       // !corert.opattrs
  PROGRAM_TYPE_SHAPE,          // !ts.shape
  PROGRAM_TYPE_OPAQUE,         // any other !dialect.type
} program_type_kind_t;

// Types are interned per program: equal types are the same pointer.
typedef struct program_type_t {
  program_type_kind_t kind;
  // The element type as a dtype when it has one (i32, f32, tensor<..xf32>,
  // !corert.string...), else LOOM_DTYPE_INVALID.
  loom_dtype_t dtype;
  const char* spelling;  // canonical text: "i32", "!tfrt.chain", ...
} program_type_t;

typedef struct program_source_location_t {
  int32_t line;
  int32_t column;
} program_source_location_t;

typedef struct program_function_t program_function_t;

typedef struct program_op_t {
  const char* name;  // the kernel name: "tfrt.add.i32"
  program_source_location_t location;
  const program_function_t* function;
  int32_t global_index;  // among all operations of the program
  bool is_return;
  int32_t num_operands;
  const int32_t* operands;  // value ids
  int32_t num_results;
  int32_t first_result;  // results are value ids first_result + i
  // The kernel's attributes, frozen (NULL: none).
  const loom_op_attrs_t* attrs;
  // Functions the operation names (@f), in textual order.
  int32_t num_callees;
  const program_function_t* const* callees;
  const char* const* callee_names;
  // Regions (`{ ... }` bodies, as tfrt_test.benchmark's), each a function
  // of its own whose arguments are the values it uses from the enclosing
  // function: region i is called with operands region_first[i] ..
  // region_first[i] + regions[i]->num_arguments - 1, which follow the
  // operands as written.
  int32_t num_regions;
  const program_function_t* const* regions;
  const int32_t* region_first;
  // corert.executeop / .seq: the op to execute and its attributes.
  const char* execute_name;          // "tf.X" became "X"
  const char* execute_written_name;  // "tf.X" as written
  int32_t execute_index;  // shared by the operations naming the same op
  const loom_op_attrs_t* execute_attrs;  // frozen, NULL: none
  // The names of execute_attrs as written, and where (checked against the
  // op's definition when a program is bound).
  int32_t num_execute_keys;
  const char* const* execute_keys;
  const program_source_location_t* execute_key_locations;
} program_op_t;

struct program_function_t {
  const loom_program_t* program;
  const char* name;
  program_source_location_t location;
  int32_t index;  // -1 for a region
  // The function whose operation holds this region, or NULL.
  const program_function_t* parent;
  int32_t num_arguments;  // values 0 .. num_arguments - 1
  int32_t num_results;
  const program_type_t* const* result_types;
  int32_t num_values;
  const program_type_t* const* value_types;
  int32_t num_ops;  // the last one is the return
  program_op_t* ops;
  int32_t num_operand_slots;  // sum of num_operands over ops
  // Per value, the operand slots that use it: a frame drops its reference
  // to a value when the last of them has run.
  const int32_t* value_uses;
};

struct loom_program_t {
  loom_allocator_t allocator;
  loom__arena_t arena;
  uint64_t id;  // unique in the process
  const char* file_name;
  int32_t num_functions;
  program_function_t** functions;
  loom__hash_map_t functions_by_name;  // name hash -> index
  // Regions, which are not functions one can name or run on their own.
  int32_t num_regions;
  program_function_t** regions;
  int32_t num_ops;
  const program_op_t** ops;   // by global index
  int32_t num_execute_names;  // distinct ops that corert.executeop names
  // Frozen attribute sets to release.
  int32_t num_frozen;
  int32_t frozen_capacity;
  const loom_op_attrs_t** frozen;
};

// The function named `name` (length bytes), or NULL.
const program_function_t* loom__program_find_function(
    const loom_program_t* program, const char* name, size_t length);

#endif  // LOOM_FUNCTION_PROGRAM_INTERNAL_H_
