"""The data folder is private to the console's user: folder 0700, files 0600.

It holds the session table (live session ids), the generated secret key and the set-up token. The
console's own writes already create files 0600 (temp file + rename, lock files); SQLite does not: it
creates the database 0644 (less the umask) and gives its `-wal`, `-shm` and `-journal` files the
database's own mode. So the folder is made 0700 at start (which alone keeps other users out, also in
the instant before a new database is tightened), and every connection that opens a database file
makes it and its companions 0600 (`connection_created`), after which SQLite creates them 0600 itself.
A umask around connecting would do the same but is process-wide, so it would race other threads.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path
from typing import Any

PRIVATE_FOLDER = 0o700
PRIVATE_FILE = 0o600
SQLITE_COMPANIONS = ("", "-wal", "-shm", "-journal")


def tighten(path: str | os.PathLike[str], allowed: int) -> None:
    """Take away every permission bit not in `allowed` (never add one; symlinks are left alone)."""
    st = os.lstat(path)
    mode = stat.S_IMODE(st.st_mode)
    if mode & ~allowed and not stat.S_ISLNK(st.st_mode):
        os.chmod(path, mode & allowed)


def make_private(folder: Path) -> bool:
    """Create `folder` 0700, or tighten it and the files in it; False when they are not ours to change.

    Raises OSError when the folder cannot be created.
    """
    folder.mkdir(mode=PRIVATE_FOLDER, parents=True, exist_ok=True)
    try:
        tighten(folder, PRIVATE_FOLDER)
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.is_file(follow_symlinks=False):
                    tighten(entry.path, PRIVATE_FILE)
    except PermissionError:  # e.g. a bind-mounted folder owned by another user: `serve` says so
        return False
    return True


def is_private(folder: Path) -> bool:
    """Whether no one but the owner may enter the folder (it may not exist yet: then it will be created so)."""
    try:
        return not stat.S_IMODE(folder.stat().st_mode) & ~PRIVATE_FOLDER
    except FileNotFoundError:
        return True


def private_sqlite_files(sender: Any, connection: Any, **kwargs: Any) -> None:
    """`connection_created` receiver: a SQLite database file and its companions become 0600."""
    if connection.vendor != "sqlite" or connection.is_in_memory_db():
        return
    name = str(connection.settings_dict["NAME"])
    for suffix in SQLITE_COMPANIONS:
        with contextlib.suppress(FileNotFoundError, PermissionError):
            tighten(name + suffix, PRIVATE_FILE)
