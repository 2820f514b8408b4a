// Exports the header-only TF_TString copy (see tstring_inline_copy.h).
// Built with only its own directory and the fixture's on the include path.

#include "tstring_inline_copy.h"

#include "tstring_inline.h"

_Static_assert(sizeof(TF_TString) == 24, "TF_TString is 24 bytes");

void inline_tstring_init(void* str) {
  TF_TString_Init((TF_TString*)str);
}
void inline_tstring_dealloc(void* str) {
  TF_TString_Dealloc((TF_TString*)str);
}
int inline_tstring_get_type(const void* str) {
  return (int)TF_TString_GetType((const TF_TString*)str);
}
size_t inline_tstring_get_size(const void* str) {
  return TF_TString_GetSize((const TF_TString*)str);
}
size_t inline_tstring_get_capacity(const void* str) {
  return TF_TString_GetCapacity((const TF_TString*)str);
}
const char* inline_tstring_get_data_pointer(const void* str) {
  return TF_TString_GetDataPointer((const TF_TString*)str);
}
char* inline_tstring_get_mutable_data_pointer(void* str) {
  return TF_TString_GetMutableDataPointer((TF_TString*)str);
}
char* inline_tstring_resize_uninitialized(void* str, size_t new_size) {
  return TF_TString_ResizeUninitialized((TF_TString*)str, new_size);
}
char* inline_tstring_resize(void* str, size_t new_size, char c) {
  return TF_TString_Resize((TF_TString*)str, new_size, c);
}
void inline_tstring_reserve(void* str, size_t new_cap) {
  TF_TString_Reserve((TF_TString*)str, new_cap);
}
void inline_tstring_reserve_amortized(void* str, size_t new_cap) {
  TF_TString_ReserveAmortized((TF_TString*)str, new_cap);
}
void inline_tstring_assign_view(void* dst, const char* src, size_t size) {
  TF_TString_AssignView((TF_TString*)dst, src, size);
}
void inline_tstring_append_n(void* dst, const char* src, size_t size) {
  TF_TString_AppendN((TF_TString*)dst, src, size);
}
void inline_tstring_append(void* dst, const void* src) {
  TF_TString_Append((TF_TString*)dst, (const TF_TString*)src);
}
void inline_tstring_copy(void* dst, const char* src, size_t size) {
  TF_TString_Copy((TF_TString*)dst, src, size);
}
void inline_tstring_assign(void* dst, const void* src) {
  TF_TString_Assign((TF_TString*)dst, (const TF_TString*)src);
}
void inline_tstring_move(void* dst, void* src) {
  TF_TString_Move((TF_TString*)dst, (TF_TString*)src);
}
