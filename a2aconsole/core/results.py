"""What a task's outcome is, as the tool returns it and as a watch delivers it.

An outcome is a plain dict (JSON-ready, no key ever in it): state, ids, the agent's final text, the
artifacts, and the files saved under `<workspace>/inbox/a2a/<agent>/`. The same outcome feeds the tool
result (`send`, `status`, `cancel`) and the follow-up text a watch delivers (`result_text`), so a result
reads the same wherever it arrives.
"""

from __future__ import annotations

import contextlib
import mimetypes
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from a2a.types import Message, Part, Task, TaskState
from google.protobuf.json_format import MessageToDict

from .files import fsync_dir
from .workspace import Workspace

STATE_NAMES: dict[int, str] = {
    TaskState.TASK_STATE_SUBMITTED: "submitted",
    TaskState.TASK_STATE_WORKING: "working",
    TaskState.TASK_STATE_COMPLETED: "completed",
    TaskState.TASK_STATE_FAILED: "failed",
    TaskState.TASK_STATE_CANCELED: "canceled",
    TaskState.TASK_STATE_REJECTED: "rejected",
    TaskState.TASK_STATE_INPUT_REQUIRED: "input-required",
    TaskState.TASK_STATE_AUTH_REQUIRED: "auth-required",
}
TERMINAL = frozenset({"completed", "failed", "canceled", "rejected"})
INTERRUPTED = frozenset({"input-required", "auth-required"})
WORKING_NOTE = "the result will be delivered to this conversation when it is ready"

_UNSAFE = re.compile(r"[^A-Za-z0-9._ -]+")
_MAX_NAME = 120


def state_name(state: int) -> str:
    """The spec's lowercase kebab name of a TaskState (`unknown` for an unspecified state)."""
    return STATE_NAMES.get(state, "unknown")


def is_terminal(state: str) -> bool:
    return state in TERMINAL


def is_interrupted(state: str) -> bool:
    """input-required / auth-required: the agent waits for the caller."""
    return state in INTERRUPTED


def is_settled(state: str) -> bool:
    """Nothing more happens until someone acts: terminal or interrupted."""
    return state in TERMINAL or state in INTERRUPTED


def message_text(message: Message | None) -> str:
    """The joined text parts of a message ('' for none)."""
    if message is None:
        return ""
    return "\n".join(p.text for p in message.parts if p.WhichOneof("content") == "text").strip()


def has_files(item: Task | Message) -> bool:
    """Whether building the outcome saves files (raw parts): only then is it worth a thread. Other
    outcomes are quick Python work, and Python work in a thread only competes with the loop for the GIL."""
    if isinstance(item, Message):
        parts = list(item.parts)
    else:
        parts = list(item.status.message.parts) if item.status.HasField("message") else []
        parts += [p for a in item.artifacts for p in a.parts]
    return any(p.WhichOneof("content") == "raw" for p in parts)


def hint_for(agent: str, task_id: str, state: str) -> str:
    """How to answer an agent's question: send again with the task id."""
    if state == "auth-required":
        return (
            f'the agent needs authentication first (see its message); then answer with action=send, agent="{agent}" '
            f'and taskId="{task_id}"'
        )
    return f'answer with action=send, agent="{agent}" and taskId="{task_id}"'


def safe_file_name(name: str, media_type: str = "") -> str:
    """A plain file name: no folders, no leading dot, only harmless characters, an extension when known."""
    base = re.split(r"[\\/]", name or "")[-1]
    base = _UNSAFE.sub("_", base).strip(" .")
    base = base.lstrip(".-_ ")
    if not base:
        base = "file"
    stem, ext = os.path.splitext(base)
    if not ext and media_type:
        ext = mimetypes.guess_extension(media_type.split(";")[0].strip()) or ""
    if len(stem) + len(ext) > _MAX_NAME:
        stem = stem[: _MAX_NAME - len(ext)]
    return stem + ext


def save_file(folder: Path, name: str, data: bytes) -> Path:
    """Write `data` as a new file in `folder`, never replacing an existing one (`name-1.ext`, `name-2.ext`, …).

    The content goes to a temp file first (fsynced) and is then hard-linked under the free name: the link
    fails if the name exists, so two writers can never claim one name and no reader sees a half file.
    A file with the same name and identical content is reused, so asking twice does not pile up copies.
    """
    folder.mkdir(parents=True, exist_ok=True)
    stem, ext = os.path.splitext(name)
    fd, tmp = tempfile.mkstemp(prefix=".incoming.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        for n in range(10_000):
            candidate = folder / (name if n == 0 else f"{stem}-{n}{ext}")
            try:
                os.link(tmp, candidate)
            except FileExistsError:
                if _same_content(candidate, data):
                    return candidate
                continue
            fsync_dir(folder)
            return candidate
        raise OSError(f"no free file name for {name} in {folder}")
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _same_content(path: Path, data: bytes) -> bool:
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size != len(data):
            return False
        return path.read_bytes() == data
    except OSError:
        return False


class _Parts:
    """Collects what the non-text parts of a task amount to: saved files, links, skipped files, data."""

    def __init__(self, agent: str, workspace: Workspace, max_file_bytes: int) -> None:
        self.agent = agent
        self.workspace = workspace
        self.max_file_bytes = max_file_bytes
        self.files: list[str] = []
        self.links: list[str] = []
        self.skipped: list[dict[str, Any]] = []

    @property
    def folder(self) -> Path:
        return self.workspace.inbox_dir / safe_file_name(self.agent)

    def take(self, part: Part, fallback: str) -> dict[str, Any] | None:
        """Handle one part; returns what an artifact lists for it (None for text, which is joined instead)."""
        kind = part.WhichOneof("content")
        if kind == "raw":
            name = safe_file_name(part.filename or fallback, part.media_type)
            size = len(part.raw)
            if size > self.max_file_bytes:
                self.skipped.append({"name": name, "bytes": size})
                return {"skipped": name, "bytes": size}
            path = save_file(self.folder, name, part.raw)
            rel = path.relative_to(self.workspace.root).as_posix()
            if rel not in self.files:
                self.files.append(rel)
            return _clean({"file": rel, "bytes": size, "mediaType": part.media_type or None})
        if kind == "url":
            if part.url not in self.links:
                self.links.append(part.url)
            return _clean({"link": part.url, "name": part.filename or None, "mediaType": part.media_type or None})
        if kind == "data":
            return {"data": MessageToDict(part.data)}
        return None


def _clean(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


def task_outcome(task: Task, agent: str, workspace: Workspace, max_file_bytes: int) -> dict[str, Any]:
    """The tool's result for a task: state, ids, final text, artifacts, saved files, links, skipped parts.

    `text` is the agent's status message, plus the text of artifacts that say something else (an agent
    may answer in either or both). Interrupted tasks carry `question` and the `hint` to answer.
    """
    state = state_name(task.status.state)
    parts = _Parts(agent, workspace, max_file_bytes)
    status_msg = task.status.message if task.status.HasField("message") else None
    status_text = message_text(status_msg)
    if status_msg is not None:
        for i, p in enumerate(status_msg.parts):
            parts.take(p, f"message-{i + 1}")
    artifacts: list[dict[str, Any]] = []
    texts: list[str] = []
    for n, art in enumerate(task.artifacts, start=1):
        art_text = "\n".join(p.text for p in art.parts if p.WhichOneof("content") == "text").strip()
        items = [x for i, p in enumerate(art.parts) if (x := parts.take(p, art.name or f"artifact-{n}-{i + 1}"))]
        entry = _clean({"name": art.name or None, "text": art_text or None, "description": art.description or None})
        if items:
            entry["parts"] = items
        artifacts.append(entry)
        if art_text and art_text != status_text and art_text not in texts:
            texts.append(art_text)
    text = "\n\n".join([t for t in [status_text, *texts] if t])
    outcome: dict[str, Any] = {
        "state": state,
        "agent": agent,
        "taskId": task.id,
        "contextId": task.context_id,
        "text": text,
        "artifacts": artifacts,
        "files": parts.files,
        "links": parts.links,
        "skipped": parts.skipped,
    }
    if parts.skipped:
        outcome["maxFileBytes"] = max_file_bytes
    if is_interrupted(state):
        outcome["question"] = status_text or "(the agent gave no question text)"
        outcome["hint"] = hint_for(agent, task.id, state)
    return outcome


def message_outcome(message: Message, agent: str, workspace: Workspace, max_file_bytes: int) -> dict[str, Any]:
    """The tool's result for a message-only reply (no task): its text and context, plus any files."""
    parts = _Parts(agent, workspace, max_file_bytes)
    for i, p in enumerate(message.parts):
        parts.take(p, f"message-{i + 1}")
    out: dict[str, Any] = {"agent": agent, "message": message_text(message), "contextId": message.context_id}
    if parts.files:
        out["files"] = parts.files
    if parts.links:
        out["links"] = parts.links
    if parts.skipped:
        out["skipped"] = parts.skipped
        out["maxFileBytes"] = max_file_bytes
    return out


def result_text(outcome: dict[str, Any]) -> str:
    """The follow-up text a watch delivers for an outcome (the spec's result text, with the deviations' lines)."""
    state = outcome.get("state", "unknown")
    agent = outcome.get("agent", "")
    task_id = outcome.get("taskId", "")
    kind = "question" if is_interrupted(state) else "result"
    lines = [f'[A2A {kind} from "{agent}", task {task_id} ({state})]']
    body = outcome.get("question") if kind == "question" else outcome.get("text")
    if body:
        lines.append(str(body))
    if outcome.get("files"):
        lines.append("Files: " + ", ".join(outcome["files"]))
    if outcome.get("links"):
        lines.append("Links: " + ", ".join(outcome["links"]))
    if outcome.get("skipped"):
        limit = outcome.get("maxFileBytes", "")
        skipped = ", ".join(f"{s['name']} ({s['bytes']} bytes)" for s in outcome["skipped"])
        lines.append(f"Files skipped (over {limit} bytes): {skipped}")
    if outcome.get("contextId"):
        lines.append(f"Context: {outcome['contextId']}")
    if kind == "question":
        lines.append("To answer: " + (outcome.get("hint") or hint_for(agent, task_id, state)))
    return "\n".join(lines)


def outcome_event(outcome: dict[str, Any], watch_id: str | None = None) -> dict[str, Any]:
    """The text and data of a RESULT / QUESTION event, for the tool and the watches alike: the final text or
    the question, files, links, skipped files, so the console renders both the same way. (The chat gets the
    spec's header text, `result_text`; the console's history gets this.)"""
    body = outcome.get("question") if is_interrupted(str(outcome.get("state", ""))) else outcome.get("text")
    data: dict[str, Any] = {
        "files": list(outcome.get("files") or []),
        "links": list(outcome.get("links") or []),
        "skipped": list(outcome.get("skipped") or []),
    }
    if watch_id:
        data["watchId"] = watch_id
    if outcome.get("maxFileBytes"):
        data["maxFileBytes"] = outcome["maxFileBytes"]
    return {"text": str(body or ""), "data": data}
