"""Atomic, locked writes of the workspace files, and their versions for optimistic concurrency.

A write goes to a temp file in the same folder, is fsynced, replaces the old file with `os.replace`, and
the folder is fsynced: a crash at any instant leaves the old or the new file, never a torn one. Writers
hold the workspace lock: an OS lock (`fcntl.flock` on `.lock`, which excludes other processes and other
threads alike, since each acquisition opens its own file description) plus an in-process lock that keeps
the coroutines and threads of one process queued rather than all blocked in the kernel.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import os
import stat
import tempfile
import threading
import weakref
from collections.abc import Iterator
from pathlib import Path

MISSING_VERSION = "missing"


def version_of(data: bytes | None) -> str:
    """The version of a file's content: a short hash, or `missing` for no file."""
    if data is None:
        return MISSING_VERSION
    return hashlib.sha256(data).hexdigest()[:16]


def read_bytes(path: Path) -> bytes | None:
    """The file's content, None when it does not exist (by descriptor: no buffered file object to build)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        chunks = []
        want = os.fstat(fd).st_size + 1  # one read for a file that does not grow meanwhile, one more to see EOF
        while chunk := os.read(fd, max(want, 65536)):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Replace `path` with `data` atomically and durably. `durable=False` skips the fsyncs: the write is still
    atomic and survives the writer's death (the page cache has it), not the machine's."""
    folder = path.parent
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            # Keep the file's mode, so a rewrite never locks out a reader; a new file stays 0600 (it may hold keys).
            with contextlib.suppress(FileNotFoundError):
                os.fchmod(f.fileno(), stat.S_IMODE(os.stat(path).st_mode))
            f.write(data)
            f.flush()
            if durable:
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    if durable:
        fsync_dir(folder)


def write_locked(path: Path, data: bytes, *, durable: bool = True) -> None:
    """`atomic_write` by the holder of the file's lock. Temp files of `path` that a killed writer left are
    swept first: holding the lock means no live writer owns one."""
    for stale in path.parent.glob(f".{path.name}.*.tmp"):
        with contextlib.suppress(FileNotFoundError):
            stale.unlink()
    key = path.absolute()
    if path.exists() and not written_here(path):
        _unseen.add(key)  # another process wrote it since our last write: its change is in what we write now
    atomic_write(path, data, durable=durable)
    with contextlib.suppress(OSError):
        _written[key] = _signature(os.stat(path))


def append_locked(path: Path, data: bytes, *, truncate: bool = False, durable: bool = False) -> os.stat_result:
    """Append `data` to `path` by the holder of its lock, in one write: a process that dies keeps all of it or
    none of it (a machine crash may cut it; the reader skips a cut line). A new file is 0600 (it may hold push
    tokens). `truncate`: empty the file first; `durable`: fsync it. Returns the file's stat after the write
    (of the descriptor: no second look-up of the path)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        if truncate:
            os.ftruncate(fd, 0)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if durable:
            os.fsync(fd)
        return os.fstat(fd)
    finally:
        os.close(fd)


# The workspace files this process last wrote, by what the file system says of them (inode, mtime, size): a file
# watcher tells this process's own writes from another process's (`written_here`) without reading the file. A
# write made over another process's change (read, changed, written back under the lock) carries that change:
# such a file stays "unseen" until the watcher has reported it (`mark_seen`), so the change is never skipped.
_written: dict[Path, tuple[int, int, int]] = {}
_unseen: set[Path] = set()


Signature = tuple[int, int, int, int]  # inode, size, mtime and ctime (ns): a file written or replaced has another
MISSING: Signature = (0, -1, 0, 0)


def file_signature(path: str | Path) -> Signature:
    """What the file system says of a file now, one stat: a cache of what the file holds is good while it stays
    the same; MISSING for a file that is not there (or cannot be looked at)."""
    try:
        return stat_signature(os.stat(path))
    except OSError:
        return MISSING


def stat_signature(st: os.stat_result) -> Signature:
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _signature(st: os.stat_result) -> tuple[int, int, int]:
    return st.st_ino, st.st_mtime_ns, st.st_size


def written_here(path: Path) -> bool:
    """True when `path` is as this process's last `write_locked` of it left it, and holds no other process's
    change that was not reported yet."""
    key = path.absolute()
    try:
        return key not in _unseen and _written.get(key) == _signature(os.stat(path))
    except OSError:
        return False


def mark_seen(path: Path) -> None:
    """A file watcher reported `path` as changed (whoever wrote it): what it holds now is known."""
    _unseen.discard(path.absolute())


def fsync_dir(folder: Path) -> None:
    """Make a rename or link in `folder` durable."""
    dir_fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


class FileLock:
    """The OS lock plus the in-process locks for one lock file. Not reentrant."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._thread_lock = threading.Lock()
        self._async_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )

    def _os_acquire(self) -> int:
        fd = _open_lock_file(self.path)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _os_try_acquire(self) -> int | None:
        """The OS lock if it is free now (no wait), else None."""
        return try_flock(self.path)

    @staticmethod
    def _os_release(fd: int) -> None:
        try:
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        """Hold the lock from synchronous code (a thread, a management command)."""
        with self._thread_lock:
            fd = self._os_acquire()
            try:
                yield
            finally:
                self._os_release(fd)

    def try_hold(self) -> int | None:
        """The OS lock if it is free now (no wait), for a section that never yields to the event loop: its
        descriptor for `release`, else None. Only the OS lock guards such a section (each holder of this lock,
        in this process or another, holds it throughout); the in-process queues just spare the waiting of
        holders that can wait, so a section that cannot wait need not join them (the usual case of a send's
        record: the lock is free)."""
        return self._os_try_acquire()

    @staticmethod
    def release(fd: int) -> None:
        """Give back what `try_hold` took."""
        FileLock._os_release(fd)

    def ahold(self) -> AsyncHold:
        """Hold the lock from a coroutine (`async with lock.ahold():`); the event loop is never blocked waiting
        for it."""
        return AsyncHold(self)


class AsyncHold:
    """`FileLock.ahold`'s context: a class, not a generator, as every send takes the lock twice."""

    __slots__ = ("_alock", "_fd", "_lock")

    def __init__(self, lock: FileLock) -> None:
        self._lock = lock
        self._fd = -1
        self._alock: asyncio.Lock | None = None

    async def __aenter__(self) -> None:
        lock = self._lock
        loop = asyncio.get_running_loop()
        alock = lock._async_locks.get(loop)
        if alock is None:
            alock = lock._async_locks[loop] = asyncio.Lock()
        await alock.acquire()
        try:
            # a free lock is taken at once; a held one is waited for in a thread (a thread hop costs a send
            # about a millisecond: the lock is mostly free)
            fd = lock._os_try_acquire()
            if fd is None:
                fd = await _acquire_in_thread(lock._os_acquire)
        except BaseException:
            alock.release()
            raise
        self._fd, self._alock = fd, alock

    async def __aexit__(self, *exc: object) -> None:
        assert self._alock is not None
        try:
            FileLock._os_release(self._fd)
        finally:
            self._alock.release()


async def _acquire_in_thread(acquire: object) -> int:
    """Run a blocking acquire in a thread; if we are cancelled meanwhile, release what it got."""
    task = asyncio.ensure_future(asyncio.to_thread(acquire))  # type: ignore[arg-type]
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        fd = await task
        FileLock._os_release(fd)
        raise


_locks: dict[Path, FileLock] = {}
_locks_guard = threading.Lock()


def try_flock(path: Path) -> int | None:
    """An exclusive OS lock on `path` (created 0600) if it is free now, without waiting: its descriptor, else None."""
    fd = _open_lock_file(path)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_lock_file(path: Path) -> int:
    """The lock file, opened (created 0600, its folder too, when missing: making an existing folder again costs
    more than the lock)."""
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        return os.open(path, os.O_RDWR | os.O_CREAT, 0o600)


def lock_for(path: Path) -> FileLock:
    """The one FileLock object of this process for a lock file, so in-process queuing works."""
    lock = _locks.get(path)  # as named before (resolving a path costs a system call per folder)
    if lock is not None:
        return lock
    key = path.resolve()
    with _locks_guard:
        lock = _locks.get(key)
        if lock is None:
            lock = _locks[key] = FileLock(key)
        _locks[path] = lock
        return lock
