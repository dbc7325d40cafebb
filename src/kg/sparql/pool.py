"""Run SPARQL queries in processes that can be killed, so a time limit really stops the work.

pyoxigraph evaluates a query in Rust without ever returning to Python, so neither a signal
nor a thread can interrupt it: the only way to stop a runaway query is to end the process
running it. Two ways of doing that:

* `call_with_timeout` (``kg sparql``, `kg.sparql.engine.query`): fork, run one call in the child, send
  the pickled result back; past the deadline the child is killed. The child inherits the loaded
  backend (copy-on-write), so this costs a fork (~4 ms), not a reload. Forking a process
  that runs other threads is safe only if the child touches nothing they lock: the child
  here only queries and pickles; a threaded server uses `WorkerPool` instead.
* `WorkerPool` (``kg serve``): a few warm worker processes, each holding its own read-only
  store; a call goes to an idle worker; one that runs past the deadline (or dies: a segfault
  stays in it) is killed and replaced in the background. Workers are fresh interpreters
  (``subprocess``, not fork: the server is threaded), talking length-prefixed pickles over
  their stdin and stdout, so they never re-run the caller's ``__main__``.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import queue
import select
import signal
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from kg.errors import KgError, QueryFailed
from kg.sparql.guard import QueryTimedOut

_HEADER = struct.Struct("!Q")
T = TypeVar("T")


class WorkerCrashed(QueryFailed):
    """The process running a query died (e.g. a stack overflow in the engine)."""


class PoolBusy(QueryFailed):
    """Every worker stayed busy longer than the caller would wait."""


def _pack(error: KgError) -> tuple[type[KgError], tuple[Any, ...], dict[str, Any]]:
    """A KgError as plain parts: pickling an exception keeps only its args, not `binding` & co."""
    return type(error), error.args, dict(vars(error))


def _unpack(parts: tuple[type[KgError], tuple[Any, ...], dict[str, Any]]) -> KgError:
    cls, args, attributes = parts
    error = cls.__new__(cls)
    error.args = args
    vars(error).update(attributes)
    return error


# --- one call in a forked child -----------------------------------------------------------


def _read_exactly(fd: int, size: int, deadline: float | None) -> bytes | None:
    """`size` bytes from `fd`; None when `deadline` (monotonic; None: never) passes first."""
    chunks: list[bytes] = []
    while size:
        left = None if deadline is None else deadline - time.monotonic()
        if (left is not None and left <= 0) or not select.select([fd], [], [], left)[0]:
            return None
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def call_with_timeout(fn: Callable[..., T], *args: Any, timeout: float | None) -> T:
    """`fn(*args)` in a forked child; `QueryTimedOut` (child killed) past `timeout` seconds
    (None: no limit, but a crash of the engine still stays in the child).

    A `KgError` the call raises is raised here, any other exception as `QueryFailed` with its
    cause; a child that dies (e.g. a stack overflow in the engine) is `WorkerCrashed`.
    Needs ``os.fork`` (Linux, macOS); elsewhere the call runs in this process, unbounded.
    """
    if not hasattr(os, "fork"):
        return fn(*args)
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        status = 0
        try:
            os.close(read_fd)
            try:
                payload = pickle.dumps((True, fn(*args)))
            except KgError as error:
                payload = pickle.dumps((False, _pack(error)))
            except Exception as error:  # noqa: BLE001 - a library's own error, reported with its cause
                payload = pickle.dumps((False, _pack(QueryFailed(f"SPARQL query failed: {type(error).__name__}: {' '.join(str(error).split())[:300]}"))))
            data = _HEADER.pack(len(payload)) + payload
            view = memoryview(data)
            while view:
                view = view[os.write(write_fd, view):]
        except BaseException:  # noqa: BLE001 - the child must end here, whatever happened
            status = 1
        finally:
            os._exit(status)
    os.close(write_fd)
    reaped = False
    try:
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            header = _read_exactly(read_fd, _HEADER.size, deadline)
            body = None if header is None else _read_exactly(read_fd, _HEADER.unpack(header)[0], deadline)
        except EOFError:
            _, status = os.waitpid(pid, 0)
            reaped = True
            raise WorkerCrashed(crash_message(status)) from None
        if body is None:
            raise QueryTimedOut(f"query stopped after the time limit of {timeout:g} s")
        ok, value = pickle.loads(body)
        if not ok:
            raise _unpack(value)
        result: T = value  # what `fn` returned, pickled in the child
        return result
    finally:
        os.close(read_fd)
        if not reaped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)


def crash_message(status: int | None) -> str:
    """Why a query process ended without answering, from its wait status (None: unknown)."""
    if status is not None and os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        cause = "; the query is probably too long or deep for the engine's stack" if number in (signal.SIGSEGV, signal.SIGBUS, signal.SIGABRT) else ""
        return f"query refused: the query engine crashed on it ({name}){cause}"
    return "query refused: the query process died before answering"


# --- a pool of warm workers ----------------------------------------------------------------


def _send_frame(fd: int, value: Any) -> None:
    payload = pickle.dumps(value)
    view = memoryview(_HEADER.pack(len(payload)) + payload)
    while view:
        view = view[os.write(fd, view):]


def _recv_frame(fd: int, timeout: float | None) -> tuple[bool, Any]:
    """(True, value), or (False, None) when nothing came within `timeout`; EOFError if closed."""
    deadline = None if timeout is None else time.monotonic() + timeout
    header = _read_exactly(fd, _HEADER.size, deadline)
    body = None if header is None else _read_exactly(fd, _HEADER.unpack(header)[0], deadline)
    return (False, None) if body is None else (True, pickle.loads(body))


def worker_main() -> None:
    """A worker process (``python -c 'from kg.sparql.pool import worker_main; worker_main()'``):
    read (opener, handler), run ``state = opener()`` once, then answer ``handler(state, request)``
    for each request frame on stdin, replies on the original stdout (fd 1 then points to stderr,
    so nothing a library prints can corrupt the replies)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the server, which stops us
    requests, replies = 0, os.dup(1)
    os.dup2(2, 1)
    try:
        _, (opener, handler) = _recv_frame(requests, None)
        try:
            state = opener()
        except KgError as error:
            return _send_frame(replies, (False, _pack(error)))
        _send_frame(replies, (True, None))
        while True:
            _, request = _recv_frame(requests, None)
            try:
                reply = (True, handler(state, request))
            except KgError as error:
                reply = (False, _pack(error))
            _send_frame(replies, reply)
    except (EOFError, BrokenPipeError):
        return  # the server went away


class _Worker:
    def __init__(self, opener: Callable[[], Any], handler: Callable[[Any, Any], Any]) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        self.process = subprocess.Popen(
            [sys.executable, "-c", "from kg.sparql.pool import worker_main; worker_main()"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None if os.environ.get("KG_WORKER_DEBUG") else subprocess.DEVNULL, env=env, bufsize=0,
        )
        assert self.process.stdin is not None and self.process.stdout is not None  # both pipes, as asked
        self._to_child, self._from_child = self.process.stdin, self.process.stdout
        self.send((opener, handler))

    def send(self, value: Any) -> None:
        _send_frame(self._to_child.fileno(), value)

    def receive(self, timeout: float) -> tuple[bool, Any]:
        return _recv_frame(self._from_child.fileno(), timeout)

    def wait_ready(self, timeout: float) -> None:
        try:
            answered, reply = self.receive(timeout)
        except (EOFError, OSError):
            self.kill()
            raise WorkerCrashed("a query worker died while starting") from None
        if not answered:
            self.kill()
            raise WorkerCrashed(f"a query worker did not start within {timeout:g} s")
        ok, error = reply
        if not ok:
            self.kill()
            raise _unpack(error)

    def kill(self, grace: float = 0.0) -> int | None:
        """End the process (after `grace` seconds to end by itself); its wait status (as
        `os.waitpid` gives) if it died by itself."""
        try:
            died = self.process.wait(timeout=grace) if grace else self.process.poll()
        except subprocess.TimeoutExpired:
            died = None
        with contextlib.suppress(OSError):
            self.process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=5)
        for stream in (self._to_child, self._from_child):
            with contextlib.suppress(OSError):
                stream.close()
        if died is None:
            return None
        return (-died & 0x7F) if died < 0 else died << 8  # Popen's returncode as a wait status


class WorkerPool:
    """`size` worker processes, each running `opener()` once and then `handler(state, request)`
    per `call`. `opener` and `handler` must be picklable (module-level functions, partials)."""

    def __init__(self, opener: Callable[[], Any], handler: Callable[[Any, Any], Any], *, size: int = 2, start_timeout: float = 600.0) -> None:
        self._opener, self._handler, self.size = opener, handler, size
        self._start_timeout = start_timeout
        self._idle: queue.Queue[_Worker] = queue.Queue()
        self._closed = False
        self._lock = threading.Lock()
        self._workers: set[_Worker] = set()
        workers = [self._spawn() for _ in range(size)]
        try:
            for worker in workers:
                worker.wait_ready(start_timeout)
        except BaseException:
            self.close()
            raise
        for worker in workers:
            self._idle.put(worker)

    def _spawn(self) -> _Worker:
        worker = _Worker(self._opener, self._handler)
        with self._lock:
            self._workers.add(worker)
        return worker

    def _retire(self, worker: _Worker, grace: float = 0.0) -> int | None:
        """Kill `worker`, start its replacement in the background, and return how the
        worker ended (a wait status, None if unknown)."""
        status = worker.kill(grace)
        with self._lock:
            self._workers.discard(worker)
        if not self._closed:
            threading.Thread(target=self._replace, name="kg-worker-restart", daemon=True).start()
        return status

    def _replace(self) -> None:
        try:
            worker = self._spawn()
            worker.wait_ready(self._start_timeout)
        except (KgError, OSError):
            return  # the pool runs one short; the next retirement tries again
        if self._closed:
            worker.kill()
        else:
            self._idle.put(worker)

    def call(self, request: Any, *, timeout: float, wait: float | None = None) -> Any:
        """`handler(state, request)` in an idle worker. Waits up to `wait` seconds (default:
        `timeout`) for one (`PoolBusy`), then up to `timeout` for the answer (`QueryTimedOut`;
        the worker is killed, which stops the work)."""
        try:
            worker = self._idle.get(timeout=timeout if wait is None else wait)
        except queue.Empty:
            raise PoolBusy("every query worker is busy; try again") from None
        try:
            worker.send(request)
            answered, reply = worker.receive(timeout)
            if not answered:
                self._retire(worker)
                raise QueryTimedOut(f"query stopped after the time limit of {timeout:g} s")
            ok, value = reply
        except (EOFError, OSError):
            status = self._retire(worker, grace=1.0)  # it closed its pipe: it is ending
            raise WorkerCrashed(crash_message(status)) from None
        self._idle.put(worker)
        if not ok:
            raise _unpack(value)
        return value

    def pids(self) -> list[int]:
        with self._lock:
            return [w.process.pid for w in self._workers]

    def close(self) -> None:
        self._closed = True
        with self._lock:
            workers, self._workers = list(self._workers), set()
        for worker in workers:
            worker.kill()
