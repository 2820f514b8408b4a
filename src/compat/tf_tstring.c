// TF_TString functions over loom_tstring_t: one layout and one set of rules
// (TensorFlow's ctstring, malloc/free included), so these behave as the
// inline copies plugins compile in. Functions that cannot report an error
// leave the string unchanged when memory runs out.

#include "tensorflow/c/tf_tstring.h"

#include <stddef.h>
#include <string.h>

#include "loom/tstring.h"

_Static_assert(sizeof(TF_TString) == sizeof(loom_tstring_t),
               "TF_TString and loom_tstring_t share one layout");
_Static_assert(sizeof(TF_TString) == 24, "TF_TString is 24 bytes");
_Static_assert(TF_TString_SmallCapacity == LOOM_TSTRING_SMALL_CAPACITY &&
                   TF_TString_SmallCapacity ==
                       sizeof(TF_TString_Union) - 2 /* size byte, NUL */,
               "22 inline bytes");
_Static_assert(offsetof(TF_TString, u.large.cap) ==
                       offsetof(loom_tstring_t, u.large.capacity) &&
                   offsetof(TF_TString, u.large.ptr) ==
                       offsetof(loom_tstring_t, u.large.ptr) &&
                   offsetof(TF_TString, u.offset.offset) ==
                       offsetof(loom_tstring_t, u.offset.offset) &&
                   offsetof(TF_TString, u.view.ptr) ==
                       offsetof(loom_tstring_t, u.view.ptr) &&
                   offsetof(TF_TString, u.smll.str) ==
                       offsetof(loom_tstring_t, u.small.str),
               "every field at the same offset");

static loom_tstring_t* L(TF_TString* str) {
  return (loom_tstring_t*)str;
}
static const loom_tstring_t* CL(const TF_TString* str) {
  return (const loom_tstring_t*)str;
}

void TF_TString_Init(TF_TString* str) {
  loom_tstring_initialize(L(str));
}

void TF_TString_Dealloc(TF_TString* str) {
  // As ctstring: only a LARGE string with a block changes.
  if (str && TF_TString_GetType(str) == TF_TSTR_LARGE && str->u.large.ptr) {
    loom_tstring_deinitialize(L(str));
  }
}

TF_TString_Type TF_TString_GetType(const TF_TString* str) {
  return (TF_TString_Type)loom_tstring_type(CL(str));
}

size_t TF_TString_GetSize(const TF_TString* str) {
  return loom_tstring_size(CL(str));
}

size_t TF_TString_GetCapacity(const TF_TString* str) {
  return loom_tstring_capacity(CL(str));
}

const char* TF_TString_GetDataPointer(const TF_TString* str) {
  return loom_tstring_data(CL(str));
}

char* TF_TString_ResizeUninitialized(TF_TString* str, size_t new_size) {
  char* data = NULL;
  loom_status_t status =
      loom_tstring_resize_uninitialized(L(str), new_size, &data);
  if (status) {
    loom_status_free(status);
    return NULL;
  }
  return data;
}

char* TF_TString_GetMutableDataPointer(TF_TString* str) {
  if (!str) return NULL;
  loom_tstring_type_t type = loom_tstring_type(L(str));
  if (type == LOOM_TSTRING_SMALL || type == LOOM_TSTRING_LARGE) {
    return (char*)loom_tstring_data(L(str));
  }
  // OFFSET and VIEW are read-only: take a private copy first.
  return TF_TString_ResizeUninitialized(str, loom_tstring_size(L(str)));
}

char* TF_TString_Resize(TF_TString* str, size_t new_size, char c) {
  size_t old_size = loom_tstring_size(L(str));
  char* data = TF_TString_ResizeUninitialized(str, new_size);
  if (data && new_size > old_size) {
    memset(data + old_size, c, new_size - old_size);
  }
  return data;
}

void TF_TString_Reserve(TF_TString* str, size_t new_cap) {
  loom_status_ignore(loom_tstring_reserve(L(str), new_cap));
}

void TF_TString_ReserveAmortized(TF_TString* str, size_t new_cap) {
  loom_status_ignore(loom_tstring_reserve_amortized(L(str), new_cap));
}

void TF_TString_AssignView(TF_TString* dst, const char* src, size_t size) {
  loom_tstring_assign_view(L(dst), src, size);
}

void TF_TString_AppendN(TF_TString* dst, const char* src, size_t src_size) {
  loom_status_ignore(loom_tstring_append(L(dst), src, src_size));
}

void TF_TString_Append(TF_TString* dst, const TF_TString* src) {
  if (!src) return;
  TF_TString_AppendN(dst, TF_TString_GetDataPointer(src),
                     TF_TString_GetSize(src));
}

void TF_TString_Copy(TF_TString* dst, const char* src, size_t size) {
  loom_status_ignore(loom_tstring_copy(L(dst), src, size));
}

void TF_TString_Assign(TF_TString* dst, const TF_TString* src) {
  loom_status_ignore(loom_tstring_assign(L(dst), CL(src)));
}

void TF_TString_Move(TF_TString* dst, TF_TString* src) {
  loom_tstring_move(L(dst), L(src));
}

void TF_StringInit(TF_TString* t) {
  TF_TString_Init(t);
}

void TF_StringCopy(TF_TString* dst, const char* src, size_t size) {
  TF_TString_Copy(dst, src, size);
}

void TF_StringAssignView(TF_TString* dst, const char* src, size_t size) {
  TF_TString_AssignView(dst, src, size);
}

const char* TF_StringGetDataPointer(const TF_TString* tstr) {
  return TF_TString_GetDataPointer(tstr);
}

TF_TString_Type TF_StringGetType(const TF_TString* str) {
  return TF_TString_GetType(str);
}

size_t TF_StringGetSize(const TF_TString* tstr) {
  return TF_TString_GetSize(tstr);
}

size_t TF_StringGetCapacity(const TF_TString* str) {
  return TF_TString_GetCapacity(str);
}

void TF_StringDealloc(TF_TString* tstr) {
  TF_TString_Dealloc(tstr);
}
