/* Export and struct-size macros of TensorFlow's C API, as provided by Loom.
 * Valid C11 and C++. */

#ifndef TENSORFLOW_C_C_API_MACROS_H_
#define TENSORFLOW_C_C_API_MACROS_H_

#ifdef SWIG
#define TF_CAPI_EXPORT
#elif defined(_WIN32)
#ifdef TF_COMPILE_LIBRARY
#define TF_CAPI_EXPORT __declspec(dllexport)
#else
#define TF_CAPI_EXPORT __declspec(dllimport)
#endif
#else
#define TF_CAPI_EXPORT __attribute__((visibility("default")))
#endif

/* The C API's boolean type (TF_BOOL is the tensor element type). */
#ifndef TF_Bool
#define TF_Bool unsigned char
#endif

/* Size of a struct up to and including MEMBER: plugin-facing structs record
 * it in their struct_size field so they can grow without breaking ABI. */
#ifndef TF_OFFSET_OF_END
#define TF_OFFSET_OF_END(TYPE, MEMBER) \
  (offsetof(TYPE, MEMBER) + sizeof(((TYPE*)0)->MEMBER))
#endif

#endif /* TENSORFLOW_C_C_API_MACROS_H_ */
