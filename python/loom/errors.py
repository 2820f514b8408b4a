"""Loom's errors as Python exceptions: one class per status code.

The codes equal TensorFlow's (TF_Code), and so do the class names.
"""

__all__ = ["LoomError"]


class LoomError(Exception):
    """An error a Loom call returned: `code` (an int, TF_Code) and `message`."""

    code = 2

    def __init__(self, message="", code=None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    @property
    def code_name(self):
        return _CODE_NAMES.get(self.code, "UNKNOWN_CODE")

    def __str__(self):
        return f"{self.code_name}: {self.message}"


_CODE_NAMES = {}
#: code -> exception class, used by the extension to raise errors.
CLASSES = {}

for _code, _const, _cls_name in [
        (1, "CANCELLED", "CancelledError"),
        (2, "UNKNOWN", "UnknownError"),
        (3, "INVALID_ARGUMENT", "InvalidArgumentError"),
        (4, "DEADLINE_EXCEEDED", "DeadlineExceededError"),
        (5, "NOT_FOUND", "NotFoundError"),
        (6, "ALREADY_EXISTS", "AlreadyExistsError"),
        (7, "PERMISSION_DENIED", "PermissionDeniedError"),
        (8, "RESOURCE_EXHAUSTED", "ResourceExhaustedError"),
        (9, "FAILED_PRECONDITION", "FailedPreconditionError"),
        (10, "ABORTED", "AbortedError"),
        (11, "OUT_OF_RANGE", "OutOfRangeError"),
        (12, "UNIMPLEMENTED", "UnimplementedError"),
        (13, "INTERNAL", "InternalError"),
        (14, "UNAVAILABLE", "UnavailableError"),
        (15, "DATA_LOSS", "DataLossError"),
        (16, "UNAUTHENTICATED", "UnauthenticatedError")]:
    _CODE_NAMES[_code] = _const
    globals()[_const] = _code
    _cls = type(_cls_name, (LoomError,), {
        "code": _code,
        "__doc__": f"Status code {_const} ({_code}).",
        "__module__": __name__,
    })
    globals()[_cls_name] = _cls
    CLASSES[_code] = _cls
    __all__ += [_cls_name, _const]
