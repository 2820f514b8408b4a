"""loom.load_library: TensorFlow custom-op libraries (tf.load_op_library)."""

import os
import re
import types

from . import _loom, _raw_ops

__all__ = ["load_library"]

_loaded = {}  # real path -> the module load_library returned


def _varint(data, position):
    value, shift = 0, 0
    while True:
        byte = data[position]
        position += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, position


def _op_names(op_list):
    """The names in a serialized tensorflow.OpList (field 1: OpDef, whose
    field 1 is its name)."""
    names, position = [], 0
    while position < len(op_list):
        key, position = _varint(op_list, position)
        if key & 7 != 2:
            raise ValueError("malformed OpList")
        size, position = _varint(op_list, position)
        op_def, position = op_list[position:position + size], position + size
        if key >> 3 != 1:
            continue
        inner = 0
        while inner < len(op_def):
            field, inner = _varint(op_def, inner)
            wire = field & 7
            if wire == 2:
                length, inner = _varint(op_def, inner)
                if field >> 3 == 1:
                    names.append(op_def[inner:inner + length].decode())
                    break
                inner += length
            elif wire == 0:
                _, inner = _varint(op_def, inner)
            else:
                inner += 8 if wire == 1 else 4
    return names


def _snake_case(name):
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_",
                  name).lower()


def load_library(path):
    """Loads the shared library at `path`, a TensorFlow custom-op library
    (or a Loom plugin): its ops and kernels register as it loads. Returns a
    module with its ops by registered name and in snake_case
    (`lib.ZeroOut`, `lib.zero_out`); they are also added to loom.raw_ops.
    Loading a library again returns the same module. Errors: NotFoundError
    for a missing file, the library's registration error otherwise."""
    key = os.path.realpath(os.fspath(path))
    if key in _loaded:
        return _loaded[key]
    op_list = _loom.load_library(os.fspath(path))
    names = set(_op_names(op_list))
    from . import raw_ops
    module = types.ModuleType(
        os.path.splitext(os.path.basename(key))[0],
        f"The ops of {key}, loaded by loom.load_library.")
    module.OP_LIST = op_list
    for op_name, inputs, outputs, attrs, _ in _loom.op_defs():
        if op_name not in names or not op_name.isidentifier():
            continue
        op = _raw_ops._make(op_name, inputs, outputs, attrs)
        setattr(raw_ops, op_name, op)
        raw_ops.__all__.append(op_name)
        setattr(module, op_name, op)
        setattr(module, _snake_case(op_name), op)
    _loaded[key] = module
    return module
