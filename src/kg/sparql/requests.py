"""Whole HTTP requests read off the sockets of `kg serve` before any thread is given to them.

A thread per connection that reads its own request can be held by a client that trickles one
byte every few seconds: a per-receive timeout never fires, and sixteen such clients held every
thread of the server. Here one thread (`RequestReader`) reads every connection at once, with
non-blocking sockets and a selector, and hands a connection to the serving threads only when
its request is whole: the header block and the body its ``Content-Length`` announces.
Answers go back the same way (`reply`): the serving thread hands the whole response to this
thread, which writes it as the client reads, so a client that never reads its answer holds a
socket, not a thread (64 of them used to stall every other client for 20 s and more); one that
reads nothing for `idle` seconds, or not all within `deadline`, is closed.
A connection is closed with ``408`` when its request is not whole `deadline` seconds after it
was accepted, or when it stays silent for `idle` seconds; a header block above
`MAX_HEADER_BYTES` gets ``431``. A request whose framing is wrong (no or a bad
``Content-Length``, chunked, too big) is handed over as soon as its headers end, so the handler
answers it with the usual ``400``/``411``/``413``.
"""

from __future__ import annotations

import contextlib
import re
import selectors
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

MAX_HEADER_BYTES = 65_536
HEADER_END = re.compile(rb"\r?\n\r?\n")
CONTENT_LENGTH = re.compile(rb"^content-length[ \t]*:[ \t]*([0-9]{1,12})[ \t]*\r?$", re.I | re.M)
FRAMING = re.compile(rb"^(?:content-length|transfer-encoding)[ \t]*:", re.I | re.M)


def status_response(code: int, reason: str, message: str) -> bytes:
    body = (message + "\n").encode("utf-8")
    return b"HTTP/1.0 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s" % (code, reason.encode(), len(body), body)


def body_length(head: bytes, max_body: int) -> int:
    """How many body bytes to wait for after the header block `head`: the one valid
    ``Content-Length`` if it is within `max_body`, else 0 (the handler refuses the request)."""
    if len(FRAMING.findall(head)) != 1:
        return 0  # none, several, or Transfer-Encoding: refused by the handler without a body
    match = CONTENT_LENGTH.search(head)
    if match is None:
        return 0
    length = int(match.group(1))
    return length if length <= max_body else 0


@dataclass
class _Pending:
    sock: socket.socket
    client: Any
    accepted: float
    heard: float
    data: bytearray = field(default_factory=bytearray)
    wanted: int | None = None  # total bytes of a whole request, once the headers ended
    answer: memoryview | None = None  # set once the request is answered: what is left to send


class RequestReader:
    """Reads requests on one thread; `ready(sock, client, data)` gets each whole one, and
    `dropped(client, reason)` hears of each connection it closes instead (reason None: when
    the reader itself is closed). `close()` stops it and closes what is left."""

    def __init__(self, ready: Callable[[socket.socket, Any, bytes], None], dropped: Callable[[Any, str | None], None], *, deadline: float, idle: float, max_body: int) -> None:
        self._ready, self._dropped = ready, dropped
        self.deadline, self.idle, self.max_body = deadline, idle, max_body
        self._selector = selectors.DefaultSelector()
        self._wake_read, self._wake_write = socket.socketpair()
        self._wake_read.setblocking(False)
        self._selector.register(self._wake_read, selectors.EVENT_READ, None)
        self._incoming: list[_Pending] = []
        self._lock = threading.Lock()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="kg-http-reader", daemon=True)
        self._thread.start()

    def add(self, sock: socket.socket, client: Any) -> None:
        """Start reading `sock` (called from the accepting thread)."""
        self._hand_over(sock, client, None)

    def reply(self, sock: socket.socket, client: Any, data: bytes) -> None:
        """Send `data` on `sock`, then close it (called from a serving thread)."""
        self._hand_over(sock, client, memoryview(data))

    def _hand_over(self, sock: socket.socket, client: Any, answer: memoryview | None) -> None:
        now = time.monotonic()
        sock.setblocking(False)
        with self._lock:
            if self._closed:
                sock.close()
                return
            self._incoming.append(_Pending(sock, client, now, now, answer=answer))
        with contextlib.suppress(OSError):
            self._wake_write.send(b"\0")

    def close(self) -> None:
        with self._lock:
            self._closed = True
        with contextlib.suppress(OSError):
            self._wake_write.send(b"\0")
        self._thread.join(timeout=5)

    def _run(self) -> None:
        pending: dict[socket.socket, _Pending] = {}
        try:
            while True:
                with self._lock:
                    closed, incoming, self._incoming = self._closed, self._incoming, []
                if closed:
                    break
                for item in incoming:
                    pending[item.sock] = item
                    self._selector.register(item.sock, selectors.EVENT_READ if item.answer is None else selectors.EVENT_WRITE, item)
                for key, _ in self._selector.select(timeout=0.25):
                    if key.data is None:
                        with contextlib.suppress(OSError):
                            self._wake_read.recv(4096)
                        continue
                    if key.data.answer is None:
                        self._read(key.data, pending)
                    else:
                        self._write(key.data, pending)
                self._expire(pending)
        finally:
            for item in list(pending.values()):
                self._drop(item, pending, None)
            self._selector.close()
            self._wake_read.close()
            self._wake_write.close()

    def _read(self, item: _Pending, pending: dict[socket.socket, _Pending]) -> None:
        try:
            chunk = item.sock.recv(65_536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as error:
            return self._drop(item, pending, None, f"connection dropped: {error.strerror or error}")
        if not chunk:
            return self._drop(item, pending, None, f"connection closed after {len(item.data):,} bytes, before the request ended")
        item.heard = time.monotonic()
        item.data += chunk
        if item.wanted is None:
            end = HEADER_END.search(item.data)
            if end is None:
                if len(item.data) > MAX_HEADER_BYTES:
                    reason = f"request headers above {MAX_HEADER_BYTES:,} bytes"
                    self._drop(item, pending, status_response(431, "Request Header Fields Too Large", reason), f"431 {reason}")
                return
            item.wanted = end.end() + body_length(bytes(item.data[: end.end()]), self.max_body)
        if len(item.data) >= item.wanted:
            self._selector.unregister(item.sock)
            del pending[item.sock]
            self._ready(item.sock, item.client, bytes(item.data))

    def _write(self, item: _Pending, pending: dict[socket.socket, _Pending]) -> None:
        assert item.answer is not None
        try:
            sent = item.sock.send(item.answer)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as error:
            return self._drop(item, pending, None, f"answer not delivered: {error.strerror or error}")
        item.heard = time.monotonic()
        item.answer = item.answer[sent:]
        if not item.answer:
            with contextlib.suppress(OSError):
                item.sock.shutdown(socket.SHUT_WR)
            self._drop(item, pending, None)

    def _expire(self, pending: dict[socket.socket, _Pending]) -> None:
        now = time.monotonic()
        for item in list(pending.values()):
            if item.answer is not None:  # an answer being sent
                if now - item.accepted > self.deadline or now - item.heard > self.idle:
                    self._drop(item, pending, None, f"the client did not read its answer ({len(item.answer):,} bytes left; timed out)")
                continue
            if now - item.accepted > self.deadline:
                reason = f"the request did not arrive whole within {self.deadline:g} s"
            elif now - item.heard > self.idle:
                reason = f"the connection stayed silent for {self.idle:g} s"
            else:
                continue
            self._drop(item, pending, status_response(408, "Request Timeout", reason), f"408 {reason} (timed out)")

    def _drop(self, item: _Pending, pending: dict[socket.socket, _Pending], answer: bytes | None, reason: str | None = None) -> None:
        with contextlib.suppress(KeyError, ValueError, OSError):
            self._selector.unregister(item.sock)
        pending.pop(item.sock, None)
        if answer is not None:
            with contextlib.suppress(OSError):
                item.sock.send(answer)  # non-blocking: a client that reads nothing gets what fits
        with contextlib.suppress(OSError):
            item.sock.close()
        self._dropped(item.client, reason)
