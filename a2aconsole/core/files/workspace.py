"""A workspace folder: its lock, `.volcanic/a2a/agents.json` and `inbox/a2a/`.

Reads are fresh on every call (no cache). Every write is atomic and under the workspace lock; a save
made from a stale version is refused with a ConflictError carrying the current content. The watch records
beside agents.json (`pending.json`) are the `pending` wing's: `pending.read(ws)`, `pending.transaction(ws)`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from a2aconsole.core.errors import ConflictError, ValidationError
from a2aconsole.core.files.agents import AgentEntry, dump_agents, parse_agents, validate_entries
from a2aconsole.core.files.atomic import FileLock, lock_for, read_bytes, version_of, write_locked


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


class Workspace:
    """One workspace folder. Cheap to construct; holds no file content."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root).resolve()
        self.a2a_dir = self.root / ".volcanic" / "a2a"
        self.agents_path = self.a2a_dir / "agents.json"
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
