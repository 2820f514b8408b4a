// Compiler and export macros shared by every public Loom header.

#ifndef LOOM_MACROS_H_
#define LOOM_MACROS_H_

// Marks a symbol exported from libloom. The library is built with hidden
// visibility by default, so only declarations carrying LOOM_API are visible.
#if defined(_WIN32)
#if defined(LOOM_BUILDING_LIBRARY)
#define LOOM_API __declspec(dllexport)
#else
#define LOOM_API __declspec(dllimport)
#endif
#else
#define LOOM_API __attribute__((visibility("default")))
#endif

// A function whose result must not be silently dropped (statuses, ownership).
#if defined(__GNUC__) || defined(__clang__)
#define LOOM_MUST_USE_RESULT __attribute__((warn_unused_result))
#define LOOM_PRINTF_FORMAT(fmt_index, first_arg) \
  __attribute__((format(printf, fmt_index, first_arg)))
#define LOOM_LIKELY(x) __builtin_expect(!!(x), 1)
#define LOOM_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define LOOM_MUST_USE_RESULT
#define LOOM_PRINTF_FORMAT(fmt_index, first_arg)
#define LOOM_LIKELY(x) (x)
#define LOOM_UNLIKELY(x) (x)
#endif

#ifdef __cplusplus
#define LOOM_EXTERN_C_BEGIN extern "C" {
#define LOOM_EXTERN_C_END }
#else
#define LOOM_EXTERN_C_BEGIN
#define LOOM_EXTERN_C_END
#endif

#endif  // LOOM_MACROS_H_
