// Registration journals (see op_registry_internal.h).

#include <pthread.h>
#include <string.h>

#include "registry/kernel_registry_internal.h"
#include "registry/op_registry_internal.h"

// Process-wide as the registries TensorFlow's registration calls write to
// and the plugin loads that watch them (see the header).
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static loom__registration_journal_t* g_active = NULL;  // guarded by g_lock
// How deep the calling thread is in exempt_begin/exempt_end.
static _Thread_local int t_exempt_depth = 0;

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

loom__registration_journal_t* loom__registration_journal_begin(void) {
  pthread_mutex_lock(&g_lock);
  return t_exempt_depth ? NULL : g_active;
}

void loom__registration_journal_exempt_begin(void) {
  ++t_exempt_depth;
}

void loom__registration_journal_exempt_end(void) {
  --t_exempt_depth;
}

void loom__registration_journal_end(void) {
  pthread_mutex_unlock(&g_lock);
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

// The next entry, cleared; NULL when reserve was skipped.
static loom__journal_entry_t* next_entry(
    loom__registration_journal_t* journal) {
  if (journal->count == journal->capacity) return NULL;
  loom__journal_entry_t* entry = &journal->entries[journal->count++];
  memset(entry, 0, sizeof(*entry));
  return entry;
}

void loom__registration_journal_add_op(loom__registration_journal_t* journal,
                                       loom_op_registry_t* registry,
                                       const loom_op_def_t* def) {
  loom__journal_entry_t* entry = next_entry(journal);
  if (!entry) return;
  entry->op_registry = registry;
  entry->op_name = def->name;
}

void loom__registration_journal_add_kernel(
    loom__registration_journal_t* journal, loom_kernel_registry_t* registry,
    uint64_t kernel_id) {
  loom__journal_entry_t* entry = next_entry(journal);
  if (!entry) return;
  entry->kernel_registry = registry;
  entry->kernel_id = kernel_id;
}

bool loom__registration_journal_add_undo(void (*undo)(void* arg), void* arg) {
  loom__registration_journal_t* journal = loom__registration_journal_begin();
  bool added = false;
  if (journal) {
    loom_status_t status = loom__registration_journal_reserve(journal);
    if (!status) {
      loom__journal_entry_t* entry = next_entry(journal);
      entry->undo = undo;
      entry->undo_arg = arg;
      added = true;
    }
    loom_status_free(status);
  }
  loom__registration_journal_end();
  return added;
}

void loom__registration_journal_record_failure(
    loom__registration_journal_t* journal, loom_status_t status) {
  if (!journal || !status || journal->failure) return;
  journal->failure = loom_status_clone(status);
}

void loom__registration_journal_report(loom_status_t status) {
  if (!status) return;
  loom__registration_journal_record_failure(loom__registration_journal_begin(),
                                            status);
  loom__registration_journal_end();
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
    } else if (entry->undo) {
      entry->undo(entry->undo_arg);
    }
  }
  journal->count = 0;
}

loom__registration_journal_t* loom__registration_journal_swap(
    loom__registration_journal_t* journal) {
  pthread_mutex_lock(&g_lock);
  loom__registration_journal_t* previous = g_active;
  g_active = journal;
  pthread_mutex_unlock(&g_lock);
  return previous;
}
