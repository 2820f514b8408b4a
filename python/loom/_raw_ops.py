"""loom.raw_ops: every registered op as a function, made at import from the
op registry (tf.raw_ops's calling convention: inputs and attributes by
keyword; attributes left out take their registered defaults)."""

import inspect
import types

from . import _loom
from ._tensor import Tensor, tensor
from .dtypes import as_dtype

_NO_DTYPE = 0
# How an Op returns its results (_execute.c's OUTPUTS_*).
_NONE, _ONE, _LIST, _TUPLE = 0, 1, 2, 3


def _dtype_enum(value):
    return as_dtype(value).enum


def _convert_attr(kind, is_list, value):
    if kind == "DTYPE":
        if is_list:
            return [_dtype_enum(v) for v in value]
        return _dtype_enum(value)
    if kind == "SHAPE" and value is not None and not is_list:
        return [None if d is None or d == -1 else int(d) for d in value]
    if kind == "DENSE" and not isinstance(value, Tensor):  # a tensor attr
        return tensor(value)
    if is_list and isinstance(value, (Tensor,)):
        return value.tolist()
    return value


def _doc(name, inputs, outputs, attrs):
    lines = [f"{name}: the registered op, run eagerly.", ""]
    if inputs:
        lines.append("Inputs:")
        lines += [f"  {spec}" for _, _, spec, _, _ in inputs]
    if attrs:
        lines.append("Attributes (keyword arguments):")
        lines += [f"  {spec}" for _, _, _, _, spec in attrs]
    if outputs:
        lines.append("Returns:")
        lines += [f"  {spec}" for _, _, spec, _, _ in outputs]
    return "\n".join(lines)


def _make(op_name, inputs, outputs, attrs):
    input_names = [arg[0] for arg in inputs]
    input_info = {arg[0]: arg for arg in inputs}
    attr_info = {attr[0]: attr for attr in attrs}
    single_output = len(outputs) == 1 and not outputs[0][1]
    list_output = len(outputs) == 1 and outputs[0][1]

    plain_inputs = not any(arg[1] for arg in inputs)

    def op(*args, **kwargs):
        if len(args) > len(input_names):
            raise TypeError(f"{op_name}() takes {len(input_names)} inputs, "
                            f"{len(args)} given")
        values = dict(zip(input_names, args))
        attr_values = {}
        device = None
        for key, value in kwargs.items():
            if key in input_info:
                if key in values:
                    raise TypeError(f"{op_name}() got input '{key}' twice")
                values[key] = value
            elif key in attr_info:
                _, kind, is_list, _, _ = attr_info[key]
                attr_values[key] = _convert_attr(kind, is_list, value)
            elif key == "name":
                continue
            elif key == "device":
                device = value
            else:
                raise TypeError(
                    f"{op_name}() got an unexpected keyword argument '{key}'")
        missing = [n for n in input_names if n not in values]
        if missing:
            raise TypeError(f"{op_name}() missing input(s): "
                            + ", ".join(repr(m) for m in missing))
        # Values that are not tensors take the dtype their type attr gets
        # from another input (x + 1 on a float tensor adds a float), or the
        # argument's fixed dtype, or NumPy's inference.
        known = {}
        for arg_name in input_names:
            value = values[arg_name]
            type_attr = input_info[arg_name][3]
            sample = value
            if isinstance(value, (list, tuple)) and input_info[arg_name][1] \
                    and value:
                sample = value[0]
            if type_attr and isinstance(sample, Tensor):
                known.setdefault(type_attr, sample.dtype)
        for attr_name, attr_value in attr_values.items():
            if attr_info[attr_name][1] == "DTYPE" and \
                    not attr_info[attr_name][2]:
                known.setdefault(attr_name, attr_value)
        flat = []
        for arg_name in input_names:
            _, is_list, _, type_attr, fixed = input_info[arg_name]
            dtype = known.get(type_attr) if type_attr else (
                fixed if fixed != _NO_DTYPE else None)
            value = values[arg_name]
            if is_list:
                flat.append([v if isinstance(v, Tensor) else
                             tensor(v, dtype=dtype) for v in value])
            else:
                flat.append(value if isinstance(value, Tensor) else
                            tensor(value, dtype=dtype))
        results = _loom.execute(op_name, flat, attr_values, device)
        if single_output:
            return results[0]
        if list_output:
            return list(results)
        if not outputs:
            return None
        return results

    op.__name__ = op_name
    op.__qualname__ = op_name
    op.__doc__ = _doc(op_name, inputs, outputs, attrs)
    params = [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD)
              for n in input_names]
    params += [inspect.Parameter(
        a[0], inspect.Parameter.KEYWORD_ONLY,
        default=None if a[3] else inspect.Parameter.empty)
        for a in attrs]
    try:
        op.__signature__ = inspect.Signature(params)
    except ValueError:
        pass  # an attr named like an input: keep *args/**kwargs
    if not plain_inputs:
        return op
    # Calls with every input a tensor, by position, and no attributes run
    # in C (the Op type); the others take the function above.
    outputs_kind = (_ONE if single_output else _LIST if list_output
                    else _TUPLE if outputs else _NONE)
    fast = _loom.Op(op_name, len(input_names), outputs_kind, op)
    for name in ("__name__", "__qualname__", "__doc__", "__signature__",
                 "__module__"):
        if hasattr(op, name):
            setattr(fast, name, getattr(op, name))
    fast.__wrapped__ = op
    return fast


def build_module():
    module = types.ModuleType(
        "loom.raw_ops", "Every registered Loom op, by its registered name.")
    names = []
    for op_name, inputs, outputs, attrs, _ in _loom.op_defs():
        if not op_name.isidentifier():
            continue  # dialect names such as "tfrt_test.add"
        setattr(module, op_name, _make(op_name, inputs, outputs, attrs))
        names.append(op_name)
    module.__all__ = names
    return module


__all__ = ["build_module"]
