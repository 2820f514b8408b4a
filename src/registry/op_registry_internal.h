// Registration journals: while a plugin initialises, every op and kernel
// registered is recorded on the load's journal, so that a failed plugin can
// be rolled back without leaving anything half-registered.
//
// The journal of a load is process-wide while the load runs, as
// TensorFlow's library loader watches every registration made meanwhile:
// a plugin may register from helper threads it starts (and joins) in its
// entry points, and TensorFlow's registration calls carry no context that
// could tell which load a call belongs to. Registrations are serialised by
// one lock, which also makes the journal safe to share between threads.

#ifndef LOOM_REGISTRY_OP_REGISTRY_INTERNAL_H_
#define LOOM_REGISTRY_OP_REGISTRY_INTERNAL_H_

#include "loom/op_def.h"

typedef struct loom_kernel_registry_t loom_kernel_registry_t;

typedef struct loom__journal_entry_t {
  loom_op_registry_t* op_registry;  // or NULL
  const char* op_name;
  loom_kernel_registry_t* kernel_registry;  // or NULL
  uint64_t kernel_id;
  void (*undo)(void* arg);  // or NULL: something else to undo
  void* undo_arg;
} loom__journal_entry_t;

typedef struct loom__registration_journal_t {
  loom_allocator_t allocator;
  loom__journal_entry_t* entries;
  size_t count;
  size_t capacity;
  loom_status_t failure;  // the first registration that failed
} loom__registration_journal_t;

void loom__registration_journal_initialize(
    loom__registration_journal_t* journal, loom_allocator_t allocator);
void loom__registration_journal_deinitialize(
    loom__registration_journal_t* journal);

// Begins a registration: takes the process-wide registration lock and
// returns the journal of the load in progress (NULL: none, or the calling
// thread registers the process's own ops: see _exempt_begin). Every
// registration runs between begin and end, so that a load's journal is
// complete when the load uninstalls it.
loom__registration_journal_t* loom__registration_journal_begin(void);
void loom__registration_journal_end(void);

// Between exempt_begin and exempt_end (they nest), the calling thread's
// registrations belong to the process, not to a load in progress: Loom's
// built-in ops, which register on first use (the first context), and a
// plugin that creates the process's first context must not take them
// with it when it fails and is rolled back.
void loom__registration_journal_exempt_begin(void);
void loom__registration_journal_exempt_end(void);

// Makes room for one more entry; registries call it before they commit a
// registration so that recording it afterwards cannot fail.
loom_status_t loom__registration_journal_reserve(
    loom__registration_journal_t* journal);

void loom__registration_journal_add_op(loom__registration_journal_t* journal,
                                       loom_op_registry_t* registry,
                                       const loom_op_def_t* def);
void loom__registration_journal_add_kernel(
    loom__registration_journal_t* journal, loom_kernel_registry_t* registry,
    uint64_t kernel_id);

// Records `undo(arg)` to run if the load is rolled back (something the
// registration calls created that only a failed load may free). Without a
// load in progress, or without memory for the entry, nothing is recorded
// and false is returned: the caller then keeps what it made.
bool loom__registration_journal_add_undo(void (*undo)(void* arg), void* arg);

// Keeps a copy of the first registration failure.
void loom__registration_journal_record_failure(
    loom__registration_journal_t* journal, loom_status_t status);

// Records `status` (not consumed; OK is ignored) as a failure of the load in
// progress, if any: a plugin whose registration calls fail does not load,
// whether or not it looks at their status.
void loom__registration_journal_report(loom_status_t status);

// Unregisters everything recorded, newest first, and empties the journal.
void loom__registration_journal_rollback(loom__registration_journal_t* journal);

// Installs `journal` as the one of the load in progress (NULL: none);
// returns the one installed before (a plugin's entry point may load
// another plugin). Once it returns, no registration uses the journal it
// replaced.
loom__registration_journal_t* loom__registration_journal_swap(
    loom__registration_journal_t* journal);

#endif  // LOOM_REGISTRY_OP_REGISTRY_INTERNAL_H_
