// The header-only TF_TString of examples/plugins/fixtures/tstring_inline.h,
// compiled in its own library (tstring_inline_copy.c) that sees no Loom
// header: the code a plugin built against TensorFlow's headers carries.
// Each function is that copy's TF_TString_<Name> on a 24-byte string.

#ifndef LOOM_TESTS_COMPAT_TSTRING_INLINE_COPY_H_
#define LOOM_TESTS_COMPAT_TSTRING_INLINE_COPY_H_

#include <stddef.h>

void inline_tstring_init(void* str);
void inline_tstring_dealloc(void* str);
int inline_tstring_get_type(const void* str);
size_t inline_tstring_get_size(const void* str);
size_t inline_tstring_get_capacity(const void* str);
const char* inline_tstring_get_data_pointer(const void* str);
char* inline_tstring_get_mutable_data_pointer(void* str);
char* inline_tstring_resize_uninitialized(void* str, size_t new_size);
char* inline_tstring_resize(void* str, size_t new_size, char c);
void inline_tstring_reserve(void* str, size_t new_cap);
void inline_tstring_reserve_amortized(void* str, size_t new_cap);
void inline_tstring_assign_view(void* dst, const char* src, size_t size);
void inline_tstring_append_n(void* dst, const char* src, size_t size);
void inline_tstring_append(void* dst, const void* src);
void inline_tstring_copy(void* dst, const char* src, size_t size);
void inline_tstring_assign(void* dst, const void* src);
void inline_tstring_move(void* dst, void* src);

#endif  // LOOM_TESTS_COMPAT_TSTRING_INLINE_COPY_H_
