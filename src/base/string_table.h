// String interning: one canonical, immutable copy per distinct string.
//
// Interned strings compare by pointer and serve as hash-map keys, so name
// lookups (op names, attribute names) cost one hash of the string, once;
// everything after that works with the pointer. Thread-safe; interned
// strings live as long as the table.

#ifndef LOOM_BASE_STRING_TABLE_H_
#define LOOM_BASE_STRING_TABLE_H_

#include <stddef.h>
#include <stdint.h>

#include "loom/allocator.h"
#include "loom/status.h"

typedef struct loom__string_table_t loom__string_table_t;

LOOM_MUST_USE_RESULT loom_status_t loom__string_table_create(
    loom_allocator_t allocator, loom__string_table_t** out_table);
void loom__string_table_destroy(loom__string_table_t* table);

// Returns the canonical NUL-terminated copy of data[0, length), adding it
// when new. Strings may contain NUL bytes; the copy is still terminated.
LOOM_MUST_USE_RESULT loom_status_t
loom__string_table_intern(loom__string_table_t* table, const char* data,
                          size_t length, const char** out_interned);

// The canonical copy if interned already, else NULL. Never allocates.
const char* loom__string_table_find(loom__string_table_t* table,
                                    const char* data, size_t length);

// Number of distinct strings.
size_t loom__string_table_size(loom__string_table_t* table);

#endif  // LOOM_BASE_STRING_TABLE_H_
