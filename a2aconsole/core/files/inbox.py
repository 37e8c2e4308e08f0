"""Where the files an agent sends land: `<workspace>/inbox/a2a/<agent>/`, each under a name of its own."""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from pathlib import Path

from a2aconsole.core.files.atomic import fsync_dir

_PROBES = 3  # taken names tried in a row before files of that name are named by their content
_STATE_FOLDER = ".volcanic"  # the console's own state (keys, tokens): never a place for an agent's files


class OutsideWorkspace(OSError):
    """The inbox folder leads outside the workspace, or into its state (a symlink on its path): nothing is
    written there."""


class InboxFolder:
    """Saves files into one folder under names never used there, in constant time per file.

    The content goes to a temp file first (fsynced) and is then hard-linked under a free name: the link fails
    if the name exists, so two writers can never claim one name and no reader sees a half file. A file of the
    same name and identical content is reused (compared by size first), so checking a task twice does not pile
    up copies. Each name remembers its next index (`name`, `name-1`, `name-2`, …), so many files of one name
    never walk the taken names again; when a few names in a row are taken by other content, that name's
    files are named by their content instead (`name-<hash>`), one try each, and found again the next time.
    The folder is fsynced once, by `sync`.
    """

    def __init__(self, folder: Path, root: Path | None = None) -> None:
        self.folder = folder
        self.root = root  # the workspace the folder must stay inside, symlinks resolved; None: not checked
        self._next: dict[str, int] = {}  # name -> next index to try; -1: name files by content
        self._saved: dict[tuple[str, bytes], Path] = {}  # (name, content hash) -> path, for repeats in one go
        self._made = False
        self._linked = False

    def save(self, name: str, data: bytes) -> Path:
        if not self._made:
            if self.root is not None:
                self.folder = self._confined(self.folder, self.root)
            self.folder.mkdir(parents=True, exist_ok=True)
            self._made = True
        digest = hashlib.sha256(data).digest()
        path = self._saved.get((name, digest))
        if path is None:
            path = self._saved[(name, digest)] = self._link(name, data, digest.hex())
        return path

    @staticmethod
    def _confined(folder: Path, root: Path) -> Path:
        """The folder with its symlinks resolved, if that is inside `root` and outside its state folder.

        Files are then written to the resolved path, so a link swapped after this check changes nothing."""
        real = Path(os.path.realpath(folder))
        inside = real.is_relative_to(root) and real != root
        if not inside or any(part.casefold() == _STATE_FOLDER for part in real.relative_to(root).parts):
            shown = folder.relative_to(root) if folder.is_relative_to(root) else folder
            raise OutsideWorkspace(f"the folder {shown.as_posix()} leads outside the workspace (a symlink)")
        return real

    def _link(self, name: str, data: bytes, digest: str) -> Path:
        stem, ext = os.path.splitext(name)
        n = self._next.get(name, 0)
        misses = _PROBES if n < 0 else 0
        tmp: str | None = None
        try:
            while True:
                if misses < _PROBES:
                    candidate = self.folder / (name if n == 0 else f"{stem}-{n}{ext}")
                else:  # by content: the same bytes find the same name again; a clash of 12 hex digits is rarer
                    candidate = self.folder / f"{stem}-{digest[: 12 + misses - _PROBES]}{ext}"
                taken = os.path.lexists(candidate)
                if not taken:
                    tmp = tmp or self._temp(data)  # written once, only when a name is free
                    try:
                        os.link(tmp, candidate)
                    except FileExistsError:
                        taken = True  # another writer got there first
                if taken and not _same_content(candidate, data):
                    misses += 1
                    n += 1
                    if misses > _PROBES + 8:  # 8 clashes of 12 to 20 hex digits: not chance
                        raise OSError(f"no free file name for {name} in {self.folder}")
                    continue
                self._linked = self._linked or not taken
                self._next[name] = n + 1 if misses < _PROBES else -1
                return candidate
        finally:
            if tmp is not None:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp)

    def _temp(self, data: bytes) -> str:
        fd, tmp = tempfile.mkstemp(prefix=".incoming.", suffix=".tmp", dir=self.folder)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
        except BaseException:
            os.unlink(tmp)
            raise
        return tmp

    def sync(self) -> None:
        """Make the new names durable (one fsync of the folder for all of them)."""
        if self._linked:
            fsync_dir(self.folder)
            self._linked = False


def _same_content(path: Path, data: bytes) -> bool:
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size != len(data):
            return False
        return path.read_bytes() == data
    except OSError:
        return False
