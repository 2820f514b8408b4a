"""loom.config: the options of Loom's eager context (tf.config's threading
and execution-mode settings).

The context is made by the first op, tensor or transformation; its thread
count is fixed from then on, as TensorFlow's is:

    import loom
    loom.config.set_num_threads(1)          # before anything runs
    loom.config.set_synchronous_execution(False)
    ...
    loom.config.async_wait()                # raises the first async error
"""

from . import _loom

__all__ = ["set_num_threads", "get_num_threads", "is_initialized",
           "set_synchronous_execution", "get_synchronous_execution",
           "async_wait", "set_logical_cpu_devices", "list_logical_devices"]


def is_initialized():
    """Whether the context exists (its thread count is then fixed)."""
    return _loom.context_info()["initialized"]


def set_num_threads(num_threads):
    """The context's worker threads (-1: one per core but one, the
    default; the calling thread computes too). RuntimeError once the
    context is initialized."""
    info = _loom.context_info()
    _loom.configure(int(num_threads), info["async"])


def get_num_threads():
    """The worker threads: the pool's size once initialized, else the
    setting (-1: one per core but one)."""
    return _loom.context_info()["num_threads"]


def set_synchronous_execution(enable):
    """Synchronous execution (the default) completes each op, and raises
    its error, before the call returns; asynchronous execution returns at
    once and reports errors at async_wait() or when a result is read.
    Before initialization this sets the context's mode; after, the calling
    thread's (TensorFlow's per-thread executors)."""
    if is_initialized():
        _loom.set_thread_async(not enable)
    else:
        info = _loom.context_info()
        _loom.configure(info["num_threads"], not enable)


def get_synchronous_execution():
    """Whether the calling thread's ops execute synchronously."""
    return not _loom.context_info()["thread_async"]


def async_wait():
    """Waits for every pending op; raises (and clears) the first error an
    asynchronous op reported."""
    _loom.wait()


def set_logical_cpu_devices(count):
    """Gives the context `count` CPU devices, CPU:0 .. CPU:<count-1>
    (TensorFlow's logical CPU devices: separate devices sharing the host's
    memory and thread pool), for loom.device and loom.ParallelHandler.
    Before initialization it is an option of the context; after, devices
    are added (a count at or below the current one changes nothing)."""
    _loom.set_cpu_device_count(int(count))


def list_logical_devices(device_type=None):
    """The full names of the context's devices (of `device_type`, such as
    "CPU", when given)."""
    return [name for name, kind in _loom.list_devices()
            if device_type is None or kind == device_type]
