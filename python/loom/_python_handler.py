"""Handlers written in Python: loom.PythonHandler."""

from . import _loom

__all__ = ["PythonHandler"]


class PythonHandler:
    """An op handler written in Python, in a stack with Loom's own.

    Subclass it and override `execute(op)`; entered with `with`, every op of
    the scope reaches `execute` before the handlers beneath it (the scopes
    entered around this one, then the device). `op` has the op's `name`,
    its `inputs` (loom.Tensor), its `attrs` (a dict of the attributes it was
    given: bools, ints, floats, loom dtypes, shapes as tuples, strings,
    lists of those), `num_outputs` and `run(*inputs, attrs=None)`, which
    runs the op with its attributes (those in `attrs` replacing them) on
    the handler beneath, on `inputs` or the op's own, and returns its
    outputs. `execute` returns the op's outputs (a list of loom.Tensor); an
    exception it raises fails the op with UNKNOWN (a loom error keeps its
    code), naming the op.

    A subclass may also define `call(fn)` to see function calls whole (a
    `@loom.function`, a function's name as an op): `fn` has the function's
    `name`, its `inputs`, `num_outputs` and `run()`, which runs the body op
    by op beneath this handler (its ops do not reach `execute`). `call`
    returns the call's outputs to take it as one op, or None to leave it:
    its body's ops then reach `execute` one by one. Without `call`, every
    call is left.

        class Counter(loom.PythonHandler):
            def __init__(self):
                super().__init__()
                self.names = []

            def execute(self, op):
                self.names.append(op.name)
                return op.run()

    Ops `execute` runs itself, other than through `op.run`, reach this
    handler again. The handler holds the object weakly: once it is
    collected, the handler's merges still on a scope pass ops on unchanged.
    """

    def __init__(self):
        self._handler = _loom.python_handler_create(self)

    def execute(self, op):
        return op.run()

    @property
    def handler(self):
        """The Loom handler (loom._loom.Handler)."""
        return self._handler

    def __enter__(self):
        _loom.enter_scope(self._handler)
        return self

    def __exit__(self, *exc_info):
        _loom.exit_scope()
        return False
