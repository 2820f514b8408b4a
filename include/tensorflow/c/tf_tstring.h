/* TF_TString: the 24-byte string of TensorFlow's C API, as provided by Loom
 * (the same layout as loom_tstring_t). Valid C11 and C++.
 *
 * The layout and the TF_TString_* operations come from
 * tensorflow/core/platform/ctstring.h, as in TensorFlow. LARGE bytes are
 * malloc'ed and freed with free(), as TensorFlow's inline code does, so
 * strings cross between plugins and Loom in both directions. */

#ifndef TENSORFLOW_C_TF_TSTRING_H_
#define TENSORFLOW_C_TF_TSTRING_H_

#include <stddef.h>
#include <stdint.h>

#include "tensorflow/c/c_api_macros.h"
#include "tensorflow/c/tf_tensor.h"
#include "tensorflow/core/platform/ctstring.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The exported string functions of tensorflow/c/tf_tstring.h: each is the
 * TF_TString_* operation of the same name. */
TF_CAPI_EXPORT extern void TF_StringInit(TF_TString* t);
TF_CAPI_EXPORT extern void TF_StringCopy(TF_TString* dst, const char* src,
                                         size_t size);
TF_CAPI_EXPORT extern void TF_StringAssignView(TF_TString* dst, const char* src,
                                               size_t size);
TF_CAPI_EXPORT extern const char* TF_StringGetDataPointer(
    const TF_TString* tstr);
TF_CAPI_EXPORT extern TF_TString_Type TF_StringGetType(const TF_TString* str);
TF_CAPI_EXPORT extern size_t TF_StringGetSize(const TF_TString* tstr);
TF_CAPI_EXPORT extern size_t TF_StringGetCapacity(const TF_TString* str);
TF_CAPI_EXPORT extern void TF_StringDealloc(TF_TString* tstr);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TENSORFLOW_C_TF_TSTRING_H_ */
