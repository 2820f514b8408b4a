// Registration journals: while a plugin initialises, every op and kernel it
// registers is recorded on the calling thread's journal, so that a failed
// plugin can be rolled back without leaving anything half-registered.

#ifndef LOOM_REGISTRY_OP_REGISTRY_INTERNAL_H_
#define LOOM_REGISTRY_OP_REGISTRY_INTERNAL_H_

#include "loom/op_def.h"

typedef struct loom_kernel_registry_t loom_kernel_registry_t;

typedef struct loom__journal_entry_t {
  loom_op_registry_t* op_registry;  // or NULL
  const char* op_name;
  loom_kernel_registry_t* kernel_registry;  // or NULL
  uint64_t kernel_id;
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

// Keeps a copy of the first registration failure.
void loom__registration_journal_record_failure(
    loom__registration_journal_t* journal, loom_status_t status);

// Unregisters everything recorded, newest first, and empties the journal.
void loom__registration_journal_rollback(loom__registration_journal_t* journal);

// Installs `journal` for the calling thread (NULL: none); returns the one
// installed before.
loom__registration_journal_t* loom__registration_journal_swap(
    loom__registration_journal_t* journal);

// The calling thread's journal, or NULL.
loom__registration_journal_t* loom__registration_journal_current(void);

#endif  // LOOM_REGISTRY_OP_REGISTRY_INTERNAL_H_
