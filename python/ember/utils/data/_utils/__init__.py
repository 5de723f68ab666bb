"""What the DataLoader and its worker processes share (as torch.utils.data._utils): the
polling intervals, the interpreter-exit flag and the exception wrapper that carries a worker's
traceback to the main process."""

import atexit
import sys
import traceback

# A worker checks this often (seconds) that the main process is still alive.
MP_STATUS_CHECK_INTERVAL = 5.0
# The main process, waiting for a batch, checks this often that the workers are alive, so that
# a worker that died (os._exit, a signal, the OOM killer) is reported within this delay.
WORKER_LIVENESS_INTERVAL = 0.2
# At shutdown, how long workers still busy with a task get before they are terminated.
WORKER_SHUTDOWN_GRACE = 1.0

# True once the interpreter is exiting: shutting workers down then would race with
# multiprocessing's own exit handler, which terminates daemonic workers anyway.
python_exit_status = False


def _set_python_exit_flag():
    global python_exit_status
    python_exit_status = True


atexit.register(_set_python_exit_flag)


class KeyErrorMessage(str):
    """A str whose repr is itself: KeyError shows repr(arg), which would escape the
    traceback's newlines."""

    __slots__ = ()

    def __repr__(self):
        return self


class ExceptionWrapper:
    """An exception and its formatted traceback, picklable, to re-raise in another process."""

    def __init__(self, exc_info=None, where="in background"):
        # Keep only the type and the text: the traceback object would hold the frames alive.
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        """Raises an exception of the original type whose message is the original
        traceback, e.g. "Caught ValueError in DataLoader worker process 1. Original
        Traceback (most recent call last): ..."."""
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            # The type needs other constructor arguments: the text still goes through.
            raise RuntimeError(msg) from None
        raise exception


from . import collate, fetch, worker  # noqa: E402,F401
