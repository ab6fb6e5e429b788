"""A cheap "the store may have changed" signal for long-polls, without polling queries:
inotify on the store's directory on Linux, else ``stat`` polling while anyone waits.
SQLite's alone: PostgreSQL has no file to watch.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import os
import struct
import sys
from pathlib import Path

logger = logging.getLogger(__name__)

POLL_SECONDS = 0.1
# A commit touches the WAL several times in a row: report it once, this long after its
# last write (the commit becomes visible only after its writes)...
COALESCE_SECONDS = 0.005
# ...but a writer that never pauses is still reported at least this often.
MAX_COALESCE_SECONDS = 0.02
# ...and once more a little later: the WAL is written before the commit becomes
# visible (through the shared-memory index, which no file event reports), so a reader
# woken by the first report may still see the state before it.
TRAILING_SECONDS = 0.05

IN_MODIFY = 0x002
IN_CLOSE_WRITE = 0x008
IN_MOVED_TO = 0x080
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_MOVE_SELF = 0x800
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_NONBLOCK = 0o4000
IN_CLOEXEC = 0o2000000
_EVENT_HEADER = struct.Struct("iIII")
_WATCHED_EVENTS = IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_MOVE_SELF
# The directory watched is gone or moved: no later write will be reported.
_WATCH_LOST = IN_IGNORED | IN_MOVE_SELF


def _libc() -> ctypes.CDLL:
    # The process's own symbols: no ``find_library``, which runs ``ldconfig`` in a
    # subprocess (a blocking call langgraph dev rightly refuses on its event loop).
    return ctypes.CDLL(None, use_errno=True)


async def sleep_until(event: asyncio.Event, timeout: float) -> None:
    """Until ``event`` is set or ``timeout`` seconds have passed, whichever is first."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(event.wait(), timeout)


class ChangeSignal:
    """Counts changes; ``wait`` returns once the count moves past a token.

    Waiters take a ``token()`` before they read and ``wait(token, …)`` after: a change
    between the two wakes them at once, so no commit is ever missed."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.names = {path.name, f"{path.name}-wal", f"{path.name}-journal"}
        self._count = 0
        self._changed: asyncio.Event | None = None

    def _event(self) -> asyncio.Event:
        if self._changed is None:
            self._changed = asyncio.Event()
        return self._changed

    def _bump(self) -> None:
        self._count += 1
        changed, self._changed = self._event(), asyncio.Event()
        changed.set()

    def token(self) -> int:
        return self._count

    def quiet_since(self, token: int) -> bool:
        """True only if no write to the store can have become visible since ``token``
        was taken. A signal that cannot be that sure says False."""
        return False

    async def wait(self, since: int, timeout: float) -> None:
        if self._count == since:
            await sleep_until(self._event(), timeout)

    def close(self) -> None:
        pass


class InotifySignal(ChangeSignal):
    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self._fd: int | None = None
        self._flush: asyncio.Handle | None = None
        self._trailing: asyncio.Handle | None = None
        self._watching = False
        self._first_event = 0.0  # loop time of the first write the pending flush reports

    @staticmethod
    def available() -> bool:
        return sys.platform.startswith("linux") and hasattr(_libc(), "inotify_init1")

    def _start(self) -> None:
        if self._fd is not None:
            return
        libc = _libc()
        fd = libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")
        directory = os.fsencode(self.path.parent)
        if libc.inotify_add_watch(fd, directory, _WATCHED_EVENTS) < 0:
            error = ctypes.get_errno()
            os.close(fd)
            raise OSError(error, f"inotify_add_watch({self.path.parent}) failed")
        asyncio.get_running_loop().add_reader(fd, self._on_events)
        self._fd, self._watching = fd, True
        # A commit written just before the watch began may not be visible yet: treat
        # the start as a change, trailing report included.
        self._flushed()

    def _on_events(self) -> None:
        assert self._fd is not None
        relevant = False
        while True:  # drain: a change must not wait behind a full buffer of others
            try:
                data = os.read(self._fd, 65536)
            except BlockingIOError:
                break
            if not data:
                break
            relevant |= self._relevant(data)
        if not relevant:
            return
        loop = asyncio.get_running_loop()
        if self._flush is None:
            self._first_event = loop.time()
        elif loop.time() - self._first_event < MAX_COALESCE_SECONDS:
            self._flush.cancel()
        else:
            return
        self._flush = loop.call_later(COALESCE_SECONDS, self._flushed)

    def _relevant(self, data: bytes) -> bool:
        offset, relevant = 0, False
        while offset < len(data):
            _wd, mask, _cookie, length = _EVENT_HEADER.unpack_from(data, offset)
            start = offset + _EVENT_HEADER.size
            name = data[start : start + length].rstrip(b"\0").decode(errors="replace")
            if mask & _WATCH_LOST:
                self._watching = False
            # Lost events (a full queue) or a lost watch: anything may have changed.
            relevant |= name in self.names or bool(mask & (IN_Q_OVERFLOW | _WATCH_LOST))
            offset = start + length
        return relevant

    def _flushed(self) -> None:
        self._flush = None
        self._bump()
        if self._trailing is not None:
            self._trailing.cancel()
        self._trailing = asyncio.get_running_loop().call_later(TRAILING_SECONDS, self._trail)

    def _trail(self) -> None:
        self._trailing = None
        self._bump()

    def token(self) -> int:
        if not self._watching:
            self._watch()
        return super().token()

    def _watch(self) -> None:
        """Watch again after the directory was deleted or moved, whatever is at its path
        now; while nothing is, the signal vouches for nothing and waiters time out."""
        self._close_fd()
        with contextlib.suppress(OSError):
            self._start()

    def _close_fd(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(RuntimeError):  # the loop may be gone already
                asyncio.get_running_loop().remove_reader(self._fd)
            os.close(self._fd)
            self._fd, self._watching = None, False

    def quiet_since(self, token: int) -> bool:
        """Exact: every write queues its event in the kernel before ``write`` returns,
        and events the loop has not delivered yet are read here. A write reported less
        than the trailing window ago may not be visible yet, so it is not quiet either."""
        if self._fd is None:
            return False
        self._on_events()
        return (
            self._watching
            and self._count == token
            and self._flush is None
            and self._trailing is None
        )

    def close(self) -> None:
        for handle in (self._flush, self._trailing):
            if handle is not None:
                handle.cancel()
        self._close_fd()


class PollingSignal(ChangeSignal):
    """One task ``stat``s the file and its WAL while anyone waits."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self._last = self._fingerprint()
        self._waiters = 0
        self._task: asyncio.Task[None] | None = None

    def _fingerprint(self) -> tuple[tuple[int, int] | None, ...]:
        def stat(path: Path) -> tuple[int, int] | None:
            try:
                info = path.stat()
            except OSError:
                return None
            return info.st_mtime_ns, info.st_size

        return tuple(stat(self.path.with_name(name)) for name in sorted(self.names))

    def _observe(self) -> None:
        current = self._fingerprint()
        if current != self._last:
            self._last = current
            self._bump()

    def token(self) -> int:
        self._observe()  # a change before the token is the token's, not the wait's
        return super().token()

    async def wait(self, since: int, timeout: float) -> None:
        self._waiters += 1
        try:
            if self._task is None or self._task.done():
                self._task = asyncio.create_task(self._poll())
            await super().wait(since, timeout)
        finally:
            self._waiters -= 1

    async def _poll(self) -> None:
        changed = False
        while self._waiters > 0:
            await asyncio.sleep(POLL_SECONDS)
            before = self._count
            self._observe()
            if changed and self._count == before:
                self._bump()  # the trailing report, as for inotify
            changed = self._count != before

    def close(self) -> None:
        if self._task is not None:
            self._task.cancel()


def change_signal(path: Path) -> ChangeSignal:
    """inotify where it works, ``stat`` polling elsewhere."""
    if InotifySignal.available() and path.parent.is_dir():
        signal = InotifySignal(path)
        try:
            signal._start()
            return signal
        except (OSError, RuntimeError) as exc:
            logger.info("inotify unavailable for %s (%s); polling instead", path, exc)
            signal.close()
    return PollingSignal(path)
