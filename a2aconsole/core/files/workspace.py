"""A workspace folder and its A2A files: `.volcanic/a2a/agents.json`, `pending.json`, and `inbox/a2a/`.

Reads are fresh on every call (no cache). Every write is atomic and under the workspace lock; a save
made from a stale version is refused with a ConflictError carrying the current content. `pending.json` is
changed only in a `PendingTx` (`pending_tx.py`; its journal: `pending_journal.py`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from a2aconsole.core.errors import ConflictError, ValidationError
from a2aconsole.core.files.agents import AgentEntry, dump_agents, parse_agents, validate_entries
from a2aconsole.core.files.atomic import FileLock, lock_for, read_bytes, version_of, write_locked
from a2aconsole.core.pending.changes import PendingTx
from a2aconsole.core.pending.journal import JOURNAL_NAME, with_journal
from a2aconsole.core.pending.records import WatchRecord, parse_pending
from a2aconsole.core.pending.store import STORE, file_sig


@dataclass
class AgentsFile:
    """What `agents.json` holds now. `entries` are the valid ones; `text` is the raw file (it has keys)."""

    path: Path
    entries: list[AgentEntry]
    problems: list[str]
    parse_error: str | None
    version: str
    text: str | None = field(default=None, repr=False)

    @property
    def exists(self) -> bool:
        return self.text is not None

    def get(self, name: str) -> AgentEntry | None:
        return next((e for e in self.entries if e.name == name), None)


@dataclass
class PendingFile:
    path: Path
    records: list[WatchRecord]
    parse_error: str | None
    version: str


class Workspace:
    """One workspace folder. Cheap to construct; holds no file content."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root).resolve()
        self.a2a_dir = self.root / ".volcanic" / "a2a"
        self.agents_path = self.a2a_dir / "agents.json"
        self.pending_path = self.a2a_dir / "pending.json"
        self.journal_path = self.a2a_dir / JOURNAL_NAME  # sends' records, read with pending.json (pending_journal.py)
        # as strings, made once: every tool call stats both files and looks the workspace up in caches, and a Path
        # passed to a stat or hashed as a key goes through pathlib's Python code each time
        self.cache_key = str(self.root)
        self.agents_file = str(self.agents_path)
        self.pending_file = str(self.pending_path)
        self.inbox_dir = self.root / "inbox" / "a2a"
        self._lock: FileLock | None = None

    def __repr__(self) -> str:
        return f"Workspace({str(self.root)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Workspace) and other.root == self.root

    def __hash__(self) -> int:
        return hash(self.root)

    def relative(self, path: Path) -> str:
        """`path` named from the workspace (`.volcanic/a2a/agents.json`): answers never show the server's folders."""
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return path.name

    @property
    def lock(self) -> FileLock:
        if self._lock is None:  # the process's one lock object for the folder, looked up once per workspace
            self._lock = lock_for(self.a2a_dir / ".lock")
        return self._lock

    # agents.json

    def read_agents(self) -> AgentsFile:
        data = read_bytes(self.agents_path)
        version = version_of(data)
        if data is None:
            return AgentsFile(self.agents_path, [], [], None, version, None)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            err = f"{self.agents_path} is not valid UTF-8 at byte {e.start}"
            return AgentsFile(self.agents_path, [], [], err, version, data.decode("utf-8", "replace"))
        entries, problems, parse_error = parse_agents(text, str(self.agents_path))
        return AgentsFile(self.agents_path, entries, problems, parse_error, version, text)

    def _check_version(self, path: Path, expected: str | None) -> None:
        data = read_bytes(path)
        current = version_of(data)
        if expected is not None and expected != current:
            text = data.decode("utf-8", "replace") if data is not None else None
            raise ConflictError(str(path), text, current)

    @staticmethod
    def _validated(entries: list[AgentEntry] | list[dict]) -> bytes:
        raw = [e.to_json() if isinstance(e, AgentEntry) else e for e in entries]
        _, problems = validate_entries(raw)
        if problems:
            raise ValidationError(problems)
        return dump_agents(raw)

    @staticmethod
    def _validated_text(text: str) -> bytes:
        _, problems, parse_error = parse_agents(text)
        if parse_error or problems:
            raise ValidationError([parse_error] if parse_error else problems)
        return text.encode()

    def save_agents(self, entries: list[AgentEntry] | list[dict], expected_version: str | None) -> str:
        """Write the whole list if the file is still at `expected_version` (None: don't check)."""
        data = self._validated(entries)
        with self.lock.hold():
            self._check_version(self.agents_path, expected_version)
            write_locked(self.agents_path, data)
        return version_of(data)

    async def asave_agents(self, entries: list[AgentEntry] | list[dict], expected_version: str | None) -> str:
        data = self._validated(entries)
        async with self.lock.ahold():
            self._check_version(self.agents_path, expected_version)
            write_locked(self.agents_path, data)
        return version_of(data)

    def save_agents_text(self, text: str, expected_version: str | None) -> str:
        """Write raw text (the owner's raw editor) after validating it; formatting is kept as typed."""
        data = self._validated_text(text)
        with self.lock.hold():
            self._check_version(self.agents_path, expected_version)
            write_locked(self.agents_path, data)
        return version_of(data)

    # pending.json

    def read_pending(self) -> PendingFile:
        """The records of `pending.json` with its journal applied (read journal first: a fold in between
        empties it, and is then read again)."""
        for _ in range(3):
            before = file_sig(self.journal_path)
            journal = read_bytes(self.journal_path)
            data = read_bytes(self.pending_path)
            if file_sig(self.journal_path) == before:
                break
        version = version_of(data)
        if data is None and not journal:
            return PendingFile(self.pending_path, [], None, version)
        try:
            records = parse_pending(data.decode("utf-8"), str(self.pending_path)) if data is not None else []
        except (ValueError, UnicodeDecodeError) as e:
            return PendingFile(self.pending_path, [], str(e), version)
        return PendingFile(self.pending_path, with_journal(records, journal, data), None, version)

    def pending_stamp(self) -> tuple[object, ...]:
        """What changes whenever `read_pending` may read something else (`pending.json` and its journal)."""
        return (file_sig(self.pending_path), file_sig(self.journal_path))

    def pending_tx(self, *, durable: bool = True) -> PendingTxScope:
        """Read-modify-write `pending.json` under the lock (`async with ws.pending_tx() as tx:`, `PendingTx`). A
        malformed file raises and is left alone. `durable=False`: no fsync (the change survives this process
        dying, not the machine crashing); such a change that only adds or removes records is a line appended to
        the journal."""
        return PendingTxScope(self, durable)

    @contextlib.contextmanager
    def pending_tx_sync(self, *, durable: bool = True) -> Iterator[PendingTx]:
        with self.lock.hold():
            tx = STORE.load(self)
            yield tx
            STORE.write(self, tx, STORE.plan(tx, durable=durable))


class PendingTxScope:
    """`Workspace.pending_tx`'s context: the lock held, the records loaded, committed when the body ends without
    an exception. A class, not a generator: every send opens one (to write its record)."""

    __slots__ = ("_durable", "_hold", "_tx", "_ws")

    def __init__(self, ws: Workspace, durable: bool) -> None:
        self._ws, self._durable = ws, durable
        self._hold = ws.lock.ahold()
        self._tx: PendingTx | None = None

    async def __aenter__(self) -> PendingTx:
        await self._hold.__aenter__()
        try:
            self._tx = STORE.load(self._ws)
        except BaseException:
            await self._hold.__aexit__()
            raise
        return self._tx

    async def __aexit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        try:
            if exc_type is None:
                assert self._tx is not None
                STORE.write(self._ws, self._tx, STORE.plan(self._tx, durable=self._durable))
        finally:
            await self._hold.__aexit__()
