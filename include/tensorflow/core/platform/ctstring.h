/* The TF_TString_* operations of TensorFlow's ctstring.h, where TensorFlow's
 * include tree has them. Valid C11 and C++.
 *
 * TensorFlow defines these static inline, so a plugin built against its
 * headers carries its own copy; Loom exports them from libloom with the
 * same rules (ctstring_internal.h for the layout): a string either side
 * makes may be read, grown and freed by the other. Where TensorFlow's
 * inline code would dereference the NULL of a failed malloc, Loom's leaves
 * the string unchanged (and the functions that return a pointer return
 * NULL). A NULL string is ignored (size 0, NULL data). */

#ifndef TENSORFLOW_CORE_PLATFORM_CTSTRING_H_
#define TENSORFLOW_CORE_PLATFORM_CTSTRING_H_

#include <stddef.h>
#include <stdint.h>

#include "tensorflow/c/c_api_macros.h"
#include "tensorflow/core/platform/ctstring_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An empty SMALL string: call before any other function. */
TF_CAPI_EXPORT extern void TF_TString_Init(TF_TString* str);
/* Frees a LARGE string's block (with free()) and empties it; other strings
 * are left as they are. */
TF_CAPI_EXPORT extern void TF_TString_Dealloc(TF_TString* str);

TF_CAPI_EXPORT extern TF_TString_Type TF_TString_GetType(const TF_TString* str);
TF_CAPI_EXPORT extern size_t TF_TString_GetSize(const TF_TString* str);
/* Bytes storable without reallocating: 22 for SMALL, 0 for OFFSET and VIEW
 * (read-only). */
TF_CAPI_EXPORT extern size_t TF_TString_GetCapacity(const TF_TString* str);
/* The bytes (NUL-terminated for SMALL and LARGE only). */
TF_CAPI_EXPORT extern const char* TF_TString_GetDataPointer(
    const TF_TString* str);
/* The writable bytes; an OFFSET or VIEW string first becomes an owned copy
 * (SMALL or LARGE). */
TF_CAPI_EXPORT extern char* TF_TString_GetMutableDataPointer(TF_TString* str);

/* Sets the size, keeping the first min(old, new) bytes and leaving new ones
 * uninitialised; returns the writable bytes. At most 22 bytes give a SMALL
 * string; a LARGE one keeps its block unless it grows past the capacity
 * (16-byte blocks less one) or shrinks below half of it. */
TF_CAPI_EXPORT extern char* TF_TString_ResizeUninitialized(TF_TString* str,
                                                           size_t new_size);
/* TF_TString_ResizeUninitialized, filling new bytes with `c`. */
TF_CAPI_EXPORT extern char* TF_TString_Resize(TF_TString* str, size_t new_size,
                                              char c);
/* Ensures a capacity of at least `new_cap` without changing the contents
 * (nothing to do up to 22 bytes). */
TF_CAPI_EXPORT extern void TF_TString_Reserve(TF_TString* str, size_t new_cap);
/* TF_TString_Reserve of at least twice the capacity, when `new_cap`
 * exceeds it. */
TF_CAPI_EXPORT extern void TF_TString_ReserveAmortized(TF_TString* str,
                                                       size_t new_cap);

/* Makes `dst` a VIEW of src[0, size), freeing what it owned; src must
 * outlive it. */
TF_CAPI_EXPORT extern void TF_TString_AssignView(TF_TString* dst,
                                                 const char* src, size_t size);
/* Appends src[0, src_size) with amortised growth (an OFFSET or VIEW dst
 * becomes owned). */
TF_CAPI_EXPORT extern void TF_TString_AppendN(TF_TString* dst, const char* src,
                                              size_t src_size);
TF_CAPI_EXPORT extern void TF_TString_Append(TF_TString* dst,
                                             const TF_TString* src);
/* Replaces dst with an owned copy (SMALL or LARGE) of src[0, size). */
TF_CAPI_EXPORT extern void TF_TString_Copy(TF_TString* dst, const char* src,
                                           size_t size);
/* dst becomes src: SMALL and VIEW are copied as they are, LARGE bytes are
 * duplicated, OFFSET becomes a VIEW of the same bytes. */
TF_CAPI_EXPORT extern void TF_TString_Assign(TF_TString* dst,
                                             const TF_TString* src);
/* dst takes src's contents; a LARGE src is left empty, an OFFSET src gives
 * a VIEW. */
TF_CAPI_EXPORT extern void TF_TString_Move(TF_TString* dst, TF_TString* src);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TENSORFLOW_CORE_PLATFORM_CTSTRING_H_ */
