// Registration journals (see op_registry_internal.h).

#include "registry/op_registry_internal.h"

#include <string.h>

#include "registry/kernel_registry_internal.h"

// The journal of the plugin whose entry points this thread is running:
// TensorFlow's registration calls (TF_RegisterKernelBuilder,
// TF_RegisterOpDefinition) take no context to carry it.
static _Thread_local loom__registration_journal_t* tls_journal = NULL;

void loom__registration_journal_initialize(
    loom__registration_journal_t* journal, loom_allocator_t allocator) {
  memset(journal, 0, sizeof(*journal));
  journal->allocator = allocator;
}

void loom__registration_journal_deinitialize(
    loom__registration_journal_t* journal) {
  loom_allocator_free(journal->allocator, journal->entries);
  loom_status_free(journal->failure);
  loom__registration_journal_initialize(journal, journal->allocator);
}

loom_status_t loom__registration_journal_reserve(
    loom__registration_journal_t* journal) {
  if (journal->count < journal->capacity) return loom_ok_status();
  size_t capacity = journal->capacity ? journal->capacity * 2 : 16;
  loom__journal_entry_t* entries = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_malloc(
      journal->allocator, sizeof(loom__journal_entry_t) * capacity,
      (void**)&entries));
  if (journal->count) {
    memcpy(entries, journal->entries,
           sizeof(loom__journal_entry_t) * journal->count);
  }
  loom_allocator_free(journal->allocator, journal->entries);
  journal->entries = entries;
  journal->capacity = capacity;
  return loom_ok_status();
}

void loom__registration_journal_add_op(loom__registration_journal_t* journal,
                                       loom_op_registry_t* registry,
                                       const loom_op_def_t* def) {
  if (journal->count == journal->capacity) return;  // reserve was skipped
  loom__journal_entry_t* entry = &journal->entries[journal->count++];
  memset(entry, 0, sizeof(*entry));
  entry->op_registry = registry;
  entry->op_name = def->name;
}

void loom__registration_journal_add_kernel(
    loom__registration_journal_t* journal, loom_kernel_registry_t* registry,
    uint64_t kernel_id) {
  if (journal->count == journal->capacity) return;
  loom__journal_entry_t* entry = &journal->entries[journal->count++];
  memset(entry, 0, sizeof(*entry));
  entry->kernel_registry = registry;
  entry->kernel_id = kernel_id;
}

void loom__registration_journal_record_failure(
    loom__registration_journal_t* journal, loom_status_t status) {
  if (!journal || !status || journal->failure) return;
  journal->failure = loom_status_clone(status);
}

void loom__registration_journal_rollback(
    loom__registration_journal_t* journal) {
  for (size_t i = journal->count; i-- > 0;) {
    loom__journal_entry_t* entry = &journal->entries[i];
    if (entry->op_registry) {
      loom_status_ignore(
          loom_op_registry_unregister(entry->op_registry, entry->op_name));
    } else if (entry->kernel_registry) {
      loom__kernel_registry_unregister(entry->kernel_registry,
                                       entry->kernel_id);
    }
  }
  journal->count = 0;
}

loom__registration_journal_t* loom__registration_journal_swap(
    loom__registration_journal_t* journal) {
  loom__registration_journal_t* previous = tls_journal;
  tls_journal = journal;
  return previous;
}

loom__registration_journal_t* loom__registration_journal_current(void) {
  return tls_journal;
}
