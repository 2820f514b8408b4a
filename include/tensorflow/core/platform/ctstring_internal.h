/* TF_TString's layout, where TensorFlow's include tree has it. Valid C11
 * and C++.
 *
 * 24 bytes; the low two bits of the first byte give the representation:
 * SMALL (the size << 2 in that byte, up to 22 bytes inline and a NUL),
 * LARGE (size << 2 | type, capacity, a malloc'ed block freed with free()),
 * OFFSET (size << 2 | type as a little-endian 32-bit word, then the offset
 * of the bytes from the string and a count: read-only) and VIEW (size << 2
 * | type, a borrowed pointer: read-only). On a big-endian target the size
 * words of LARGE and VIEW carry the type in the low bits of their high
 * byte, which comes first in memory. This is TensorFlow's layout and the
 * one of loom_tstring_t (loom/tstring.h). */

#ifndef TENSORFLOW_CORE_PLATFORM_CTSTRING_INTERNAL_H_
#define TENSORFLOW_CORE_PLATFORM_CTSTRING_INTERNAL_H_

#include <stddef.h>
#include <stdint.h>

typedef enum TF_TString_Type {
  TF_TSTR_SMALL = 0x00,
  TF_TSTR_LARGE = 0x01,
  TF_TSTR_OFFSET = 0x02,
  TF_TSTR_VIEW = 0x03,
  TF_TSTR_TYPE_MASK = 0x03
} TF_TString_Type;

typedef struct TF_TString_Large {
  size_t size;
  size_t cap;
  char* ptr;
} TF_TString_Large;

typedef struct TF_TString_Offset {
  uint32_t size;
  uint32_t offset;
  uint32_t count;
} TF_TString_Offset;

typedef struct TF_TString_View {
  size_t size;
  const char* ptr;
} TF_TString_View;

typedef struct TF_TString_Raw {
  uint8_t raw[24];
} TF_TString_Raw;

/* Every representation but SMALL, which fills what they leave. */
typedef union TF_TString_Union {
  TF_TString_Large large;
  TF_TString_Offset offset;
  TF_TString_View view;
  TF_TString_Raw raw;
} TF_TString_Union;

/* The union's bytes less the size byte and the NUL. */
enum { TF_TString_SmallCapacity = 22 };

typedef struct TF_TString_Small {
  uint8_t size;
  char str[TF_TString_SmallCapacity + 1];
} TF_TString_Small;

typedef struct TF_TString {
  union {
    TF_TString_Small smll; /* "small" is a macro on some platforms */
    TF_TString_Large large;
    TF_TString_Offset offset;
    TF_TString_View view;
    TF_TString_Raw raw;
  } u;
} TF_TString;

#endif /* TENSORFLOW_CORE_PLATFORM_CTSTRING_INTERNAL_H_ */
