// TF_ShapeAndTypeList of TensorFlow's experimental C API: a plain list of
// (shape, dtype) items whose memory the caller frees with the functions
// below.

#include <stdlib.h>
#include <string.h>

#include "tensorflow/c/c_api_experimental.h"

TF_ShapeAndTypeList* TF_NewShapeAndTypeList(int num_shapes) {
  if (num_shapes < 0) return NULL;
  TF_ShapeAndTypeList* list = malloc(sizeof(*list));
  if (!list) return NULL;
  list->num_items = num_shapes;
  list->items = NULL;
  if (num_shapes > 0) {
    list->items = calloc((size_t)num_shapes, sizeof(*list->items));
    if (!list->items) {
      free(list);
      return NULL;
    }
  }
  for (int i = 0; i < num_shapes; ++i) list->items[i].num_dims = -1;
  return list;
}

static TF_ShapeAndType* item_at(TF_ShapeAndTypeList* list, int index) {
  if (!list || index < 0 || index >= list->num_items) return NULL;
  return &list->items[index];
}

void TF_ShapeAndTypeListSetShape(TF_ShapeAndTypeList* shape_list, int index,
                                 const int64_t* dims, int num_dims) {
  TF_ShapeAndType* item = item_at(shape_list, index);
  if (!item || num_dims < 0 || (num_dims > 0 && !dims)) return;
  int64_t* copy = NULL;
  if (num_dims > 0) {
    copy = malloc((size_t)num_dims * sizeof(*copy));
    if (!copy) return;
    memcpy(copy, dims, (size_t)num_dims * sizeof(*copy));
  }
  free(item->dims);
  item->dims = copy;
  item->num_dims = num_dims;
}

void TF_ShapeAndTypeListSetUnknownShape(TF_ShapeAndTypeList* shape_list,
                                        int index) {
  TF_ShapeAndType* item = item_at(shape_list, index);
  if (!item) return;
  free(item->dims);
  item->dims = NULL;
  item->num_dims = -1;
}

void TF_ShapeAndTypeListSetDtype(TF_ShapeAndTypeList* shape_list, int index,
                                 TF_DataType dtype) {
  TF_ShapeAndType* item = item_at(shape_list, index);
  if (item) item->dtype = dtype;
}

void TF_DeleteShapeAndTypeList(TF_ShapeAndTypeList* shape_list) {
  if (!shape_list) return;
  for (int i = 0; i < shape_list->num_items; ++i) {
    free(shape_list->items[i].dims);
  }
  free(shape_list->items);
  free(shape_list);
}

void TF_DeleteShapeAndTypeListArray(TF_ShapeAndTypeList** shape_list_array,
                                    int num_items) {
  if (!shape_list_array) return;
  for (int i = 0; i < num_items; ++i) {
    TF_DeleteShapeAndTypeList(shape_list_array[i]);
  }
  free(shape_list_array);
}
