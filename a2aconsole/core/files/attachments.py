"""Attachments of a `send`: workspace files read safely (as plain values; `client.py` makes them file parts).

Paths are confined to the workspace after resolving symlinks; only regular files are read (a FIFO, device
or folder is refused before anything opens it, so it can never hang the call); all files together are
capped at `MaxFileBytes`. The console's own state is never attached, whatever the path's case, `..` or
symlinks: nothing under a `.volcanic/` folder (agent keys, push tokens, locks, temp files) and nothing
under the private paths the caller names (the data folder: database, secret key, set-up token).
"""

from __future__ import annotations

import mimetypes
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePath

from a2aconsole.core.errors import ToolError
from a2aconsole.core.files.workspace import Workspace

STATE_FOLDER = ".volcanic"


@dataclass(frozen=True)
class Attachment:
    """One file to send: its bytes, media type and name (no folders)."""

    filename: str
    media_type: str
    data: bytes = field(repr=False)


def _under(path: PurePath, root: PurePath) -> bool:
    """`path` is `root` or inside it, compared without case (a case-insensitive file system is one folder)."""
    p, r = str(path).casefold(), str(root).casefold().rstrip(os.sep)
    return p == r or p.startswith(r + os.sep)


def is_console_state(root: Path, raw: str, real: Path, private: Sequence[Path]) -> bool:
    """True for the console's own files: a `.volcanic` folder anywhere below the workspace on the path as given
    or as resolved (a nested workspace's too), or anything under a private path, itself resolved too."""
    given = () if os.path.isabs(raw) else PurePath(os.path.normpath(raw)).parts
    resolved = real.relative_to(root).parts if real.is_relative_to(root) else real.parts
    if any(part.casefold() == STATE_FOLDER for part in (*given, *resolved)):
        return True
    return any(_under(real, Path(os.path.realpath(p))) or _under(real, p) for p in private)


def read_attachments(
    workspace: Workspace, paths: list[str], cap: int, private: Sequence[Path] = ()
) -> list[Attachment]:
    """The files at workspace paths: confined to the workspace, never the console's state (`.volcanic/`,
    `private`), regular files only, capped together.

    The type of each path is checked with stat before anything opens it, and the open is non-blocking and
    re-checked on the descriptor, so a FIFO or device can never hang the call.
    """
    root = workspace.root
    parts: list[Attachment] = []
    total = 0
    for raw in paths:
        try:
            real = Path(os.path.realpath(root / raw))
        except (OSError, ValueError) as e:
            raise ToolError(f"file {raw!r}: {e}") from None
        if is_console_state(root, raw, real, private):
            raise ToolError(
                f"file {raw!r} is the console's own state (agent keys, push tokens); it can never be attached"
            )
        if not real.is_relative_to(root) or real == root:
            raise ToolError(f"file {raw!r} is outside the workspace; attach only files inside it")
        try:
            st = os.stat(real)
        except FileNotFoundError:
            raise ToolError(f"file {raw!r} does not exist in the workspace") from None
        except OSError as e:
            raise ToolError(f"file {raw!r} cannot be read: {e.strerror}") from None
        if stat.S_ISDIR(st.st_mode):
            raise ToolError(f"file {raw!r} is a folder; attach files one by one")
        if not stat.S_ISREG(st.st_mode):
            raise ToolError(f"file {raw!r} is not a regular file (a pipe, socket or device); it cannot be attached")
        too_big = f"the attached files are larger than {cap} bytes together (MaxFileBytes); send fewer"
        if total + st.st_size > cap:
            raise ToolError(too_big)
        data = _read_regular(real, raw, cap - total)
        total += len(data)
        media_type = mimetypes.guess_type(real.name)[0] or "application/octet-stream"
        parts.append(Attachment(real.name, media_type, data))
    return parts


def _read_regular(path: Path, shown: str, cap: int) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError as e:
        raise ToolError(f"file {shown!r} cannot be read: {e.strerror}") from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise ToolError(f"file {shown!r} is not a regular file; it cannot be attached")
        data = f.read(cap + 1)
    if len(data) > cap:
        raise ToolError(f"file {shown!r} grew while it was read; the attachments are over MaxFileBytes")
    return data
