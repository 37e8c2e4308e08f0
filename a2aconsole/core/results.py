"""What a task's outcome is, as the tool returns it and as a watch delivers it.

An outcome is a plain dict (JSON-ready, no key ever in it): state, ids, the agent's final text, the
artifacts, and the files saved under `<workspace>/inbox/a2a/<agent>/`. The same outcome feeds the tool
result (`send`, `status`, `cancel`) and the follow-up text a watch delivers (`result_text`), so a result
reads the same wherever it arrives.

An outcome is bounded whatever the agent sent: at most MAX_TEXT_CHARS of text inline (a longer text is saved
as a file and stands as its preview), MAX_ARTIFACTS artifacts and MAX_PARTS parts (the rest are counted as
skipped), only http(s) URLs as links. Events keep a preview of that (`outcome_event`).
"""

from __future__ import annotations

import json
import mimetypes
import os
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from a2aconsole.core.data_parts import JsonCut, event_data_parts, first_chars
from a2aconsole.core.files import InboxFolder, OutsideWorkspace, Workspace, is_http_url
from a2aconsole.core.remote import MessageValue, PartValue, TaskSnapshot

TERMINAL = frozenset({"completed", "failed", "canceled", "rejected"})
INTERRUPTED = frozenset({"input-required", "auth-required"})
WORKING_NOTE = "the result will be delivered to this conversation when it is ready"

_UNSAFE = re.compile(r"[^A-Za-z0-9._ -]+")
_MAX_NAME = 120

MAX_TEXT_CHARS = 64 * 1024  # text inlined in one outcome; a longer text is saved as a file
PREVIEW_CHARS = 4 * 1024  # what stands for a saved text, and all of a text an event or inbox row keeps
MAX_ARTIFACTS = 200  # artifacts taken from one task
MAX_PARTS = 2_000  # parts taken from one task or message (status message and artifacts together)
MAX_URL_CHARS = 2048  # a longer URL is not made a link
LISTED = 50  # files, links and skipped parts an event lists; the rest are counted
LISTED_CHARS = 2048  # ... and at most about this many characters of each list
_SHOWN = 200  # how much of a name, media type, or URL that is not a link is kept


def is_terminal(state: str) -> bool:
    return state in TERMINAL


def is_interrupted(state: str) -> bool:
    """input-required / auth-required: the agent waits for the caller."""
    return state in INTERRUPTED


def is_settled(state: str) -> bool:
    """Nothing more happens until someone acts: terminal or interrupted."""
    return state in TERMINAL or state in INTERRUPTED


def message_text(message: MessageValue | None) -> str:
    """The joined text parts of a message ('' for none)."""
    if message is None:
        return ""
    return _joined(message.parts)


def is_message(reply: TaskSnapshot | MessageValue) -> bool:
    """A send's reply that is a message alone (no task: nothing to follow)."""
    return isinstance(reply, MessageValue)


def has_files(item: TaskSnapshot | MessageValue) -> bool:
    """Whether building the outcome saves files (raw parts, or more text than is inlined): only then is it
    worth a thread. Other outcomes are quick Python work, and Python work in a thread only competes with the
    loop for the GIL."""
    if isinstance(item, MessageValue):
        parts = list(item.parts)
    else:
        parts = list(item.status.message.parts) if item.status.message is not None else []
        parts += [p for a in item.artifacts for p in a.parts]
    text = 0
    for p in parts:
        if p.kind == "raw":
            return True
        if p.kind == "text":
            text += len(p.text)
    return text > MAX_TEXT_CHARS


def preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    """`text` cut to its first `limit` characters, saying how many more there were."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[… {len(text) - limit:,} more characters]"


def json_preview(value: Any, budget: int = MAX_TEXT_CHARS, cut: Callable[[str, int], str] = first_chars) -> Any:
    """A JSON value (a raw task as an agent sent it) cut to about `budget` characters of strings: each string
    to PREVIEW_CHARS, then lists and objects end with a count of what is left out (`data_parts.JsonCut`).
    `cut(text, keep)` makes the part of a string (or key) that is kept: `Scrubber.cut` scrubs just that much."""
    return JsonCut(budget, string_chars=PREVIEW_CHARS, cut=cut).walk(value)


def is_web_link(url: str) -> bool:
    """An absolute http(s) URL of reasonable length: the only URLs an agent sends that become links
    (`javascript:`, `data:` and the like are kept as text)."""
    return len(url) <= MAX_URL_CHARS and is_http_url(url)


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


class _Parts:
    """Collects what the parts of a task amount to: texts within the inline budget (longer ones saved), saved
    files, links, URLs kept as text, and what was skipped (too big, or over the count)."""

    __slots__ = (
        "agent",
        "workspace",
        "max_file_bytes",
        "_inbox",
        "files",
        "links",
        "other_urls",
        "skipped",
        "text_files",
        "taken",
        "parts_skipped",
        "budget",
        "refused",
        "_texts",
    )

    def __init__(self, agent: str, workspace: Workspace, max_file_bytes: int) -> None:
        self.agent = agent
        self.workspace = workspace
        self.max_file_bytes = max_file_bytes
        self._inbox: InboxFolder | None = None  # made on the first file saved: most outcomes save none
        self.files: list[str] = []
        self.links: list[str] = []
        self.other_urls: list[str] = []
        self.skipped: list[dict[str, Any]] = []
        self.text_files: list[dict[str, Any]] = []
        self.taken = 0
        self.parts_skipped = 0
        self.budget = MAX_TEXT_CHARS
        self.refused = ""  # why the inbox folder takes no files (it leads outside the workspace), once found
        self._texts: dict[str, str] = {}

    def admit(self, parts: Iterable[PartValue]) -> list[PartValue]:
        """The parts still within MAX_PARTS; the others are counted as skipped."""
        parts = list(parts)
        if self.taken + len(parts) <= MAX_PARTS:  # the usual case, without the arithmetic of the cut
            self.taken += len(parts)
            return parts
        room = max(0, MAX_PARTS - self.taken)
        self.taken += min(room, len(parts))
        self.parts_skipped += max(0, len(parts) - room)
        return parts[:room]

    def _save(self, name: str, data: bytes) -> str | None:
        """The saved file's workspace path; None when the inbox folder takes no files (`refused` says why)."""
        if self.refused:
            return None
        if self._inbox is None:
            folder = self.workspace.inbox_dir / safe_file_name(self.agent)
            self._inbox = InboxFolder(folder, self.workspace.root)
        try:
            path = self._inbox.save(name, data)
        except OutsideWorkspace as e:
            self.refused = str(e)
            return None
        return path.relative_to(self.workspace.root).as_posix()

    def _not_saved(self, name: str, size: int) -> dict[str, Any]:
        self.skipped.append({"name": name, "bytes": size, "reason": self.refused})
        return {"skipped": name, "bytes": size, "reason": self.refused}

    def text(self, text: str, name: str) -> str:
        """`text` as the outcome holds it: whole while the inline budget lasts, else saved as `<name>.txt` and
        standing as its preview, which names the file."""
        if text in self._texts:
            return self._texts[text]
        if len(text) <= self.budget:
            self.budget -= len(text)
            held = text
        else:
            keep = max(0, min(PREVIEW_CHARS, self.budget))
            self.budget -= keep
            file_name = safe_file_name(name) + ".txt"
            data = text.encode()
            rel = self._save(file_name, data)
            if rel is None:
                self._not_saved(file_name, len(data))
                held = f"{text[:keep]}\n[… {len(text) - keep:,} more characters, not saved: {self.refused}]"
            else:
                self.text_files.append({"name": name, "file": rel, "chars": len(text)})
                held = f"{text[:keep]}\n[… {len(text) - keep:,} more characters: the full text is in {rel}]"
        self._texts[text] = held
        return held

    def take(self, part: PartValue, fallback: str) -> dict[str, Any] | None:
        """Handle one part; returns what an artifact lists for it (None for text, which is joined instead)."""
        kind = part.kind
        if kind == "raw":
            name = safe_file_name(part.filename or fallback, part.media_type)
            size = len(part.raw)
            if size > self.max_file_bytes:
                self.skipped.append({"name": name, "bytes": size})
                return {"skipped": name, "bytes": size}
            rel = self._save(name, part.raw)
            if rel is None:
                return self._not_saved(name, size)
            if rel not in self.files:
                self.files.append(rel)
            return _clean({"file": rel, "bytes": size, "mediaType": _cut(part.media_type)})
        if kind == "url":
            if not is_web_link(part.url):
                shown = part.url[:_SHOWN]
                if shown not in self.other_urls:
                    self.other_urls.append(shown)
                return _clean({"url": shown, "note": "not an http(s) link: kept as text", "name": _cut(part.filename)})
            if part.url not in self.links:
                self.links.append(part.url)
            return _clean({"link": part.url, "name": _cut(part.filename), "mediaType": _cut(part.media_type)})
        if kind == "data":
            data = part.data
            size = len(json.dumps(data, ensure_ascii=False))
            if size <= self.budget:
                self.budget -= size
                return {"data": data}
            file_name = safe_file_name(fallback) + ".json"
            encoded = json.dumps(data, ensure_ascii=False).encode()
            rel = self._save(file_name, encoded)
            if rel is None:
                return self._not_saved(file_name, len(encoded))
            return {"dataFile": rel, "chars": size}
        return None

    def extras(self, out: dict[str, Any]) -> None:
        """Add what was held back to an outcome: texts saved as files, URLs kept as text, skipped parts."""
        if self.text_files:
            out["textFiles"] = self.text_files
        if self.other_urls:
            out["otherUrls"] = self.other_urls
        if self.parts_skipped:
            out["partsSkipped"] = self.parts_skipped
            out["maxParts"] = MAX_PARTS
        if self._inbox is not None:
            self._inbox.sync()


def _data_of(items: list[dict[str, Any] | None]) -> list[dict[str, Any]]:
    """What `_Parts.take` made of a message's data parts (`data`, or `dataFile` when saved): its files are listed
    in `files` already."""
    return [x for x in items if x is not None and ("data" in x or "dataFile" in x)]


def _clean(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


def _cut(s: str, limit: int = _SHOWN) -> str | None:
    """A short string the agent named something with (None for empty), cut to `limit` characters."""
    return (s if len(s) <= limit else s[: limit - 1] + "…") or None


def _joined(parts: Sequence[PartValue]) -> str:
    if len(parts) == 1:  # the usual case, without a generator
        return parts[0].text.strip() if parts[0].kind == "text" else ""
    return "\n".join([p.text for p in parts if p.kind == "text"]).strip()


def task_outcome(task: TaskSnapshot, agent: str, workspace: Workspace, max_file_bytes: int) -> dict[str, Any]:
    """The tool's result for a task: state, ids, final text, artifacts, saved files, links, skipped parts.

    `text` is the agent's status message, plus the text of artifacts that say something else (an agent
    may answer in either or both). Interrupted tasks carry `question` and the `hint` to answer.
    """
    state = task.state
    parts = _Parts(agent, workspace, max_file_bytes)
    status_parts = parts.admit(task.status.message.parts) if task.status.message is not None else []
    status_full = _joined(status_parts)
    message_data = _data_of([parts.take(p, f"message-{i + 1}") for i, p in enumerate(status_parts) if p.kind != "text"])
    status_text = parts.text(status_full, "message") if status_full else ""
    artifacts: list[dict[str, Any]] = []
    texts: list[str] = []
    for n, art in enumerate(task.artifacts[:MAX_ARTIFACTS], start=1):
        admitted = parts.admit(art.parts)
        items = [
            x
            for i, p in enumerate(admitted)
            if p.kind != "text" and (x := parts.take(p, art.name or f"artifact-{n}-{i + 1}"))
        ]
        art_full = _joined(admitted)
        art_text = parts.text(art_full, art.name or f"artifact-{n}") if art_full else ""
        entry = _clean({"name": _cut(art.name), "text": art_text or None, "description": _cut(art.description, 1024)})
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
    if message_data:  # the status message's data parts (a question's form); its files are in `files`
        outcome["messageData"] = message_data
    if len(task.artifacts) > MAX_ARTIFACTS:
        outcome["artifactsSkipped"] = len(task.artifacts) - MAX_ARTIFACTS
    parts.extras(outcome)
    if is_interrupted(state):
        outcome["question"] = status_text or "(the agent gave no question text)"
        outcome["hint"] = hint_for(agent, task.id, state)
    return outcome


def message_outcome(message: MessageValue, agent: str, workspace: Workspace, max_file_bytes: int) -> dict[str, Any]:
    """The tool's result for a message-only reply (no task): its text and context, plus any files."""
    parts = _Parts(agent, workspace, max_file_bytes)
    admitted = parts.admit(message.parts)
    items = _data_of([parts.take(p, f"message-{i + 1}") for i, p in enumerate(admitted) if p.kind != "text"])
    full = _joined(admitted)
    text = parts.text(full, "message") if full else ""
    out: dict[str, Any] = {"agent": agent, "message": text, "contextId": message.context_id}
    if items:
        out["messageData"] = items
    if parts.files:
        out["files"] = parts.files
    if parts.links:
        out["links"] = parts.links
    if parts.skipped:
        out["skipped"] = parts.skipped
        out["maxFileBytes"] = max_file_bytes
    parts.extras(out)
    return out


def result_text(outcome: dict[str, Any]) -> str:
    """The follow-up text a watch delivers for an outcome (the spec's result text, with the deviations' lines).
    Its lists name the first files and links (`_listed`) and count the rest: the whole lists are in the tool's
    result, and this text is kept in pending.json until delivered."""
    state = outcome.get("state", "unknown")
    agent = outcome.get("agent", "")
    task_id = outcome.get("taskId", "")
    kind = "question" if is_interrupted(state) else "result"
    lines = [f'[A2A {kind} from "{agent}", task {task_id} ({state})]']
    body = outcome.get("question") if kind == "question" else outcome.get("text")
    if body:
        lines.append(str(body))
    if outcome.get("files"):
        lines.append("Files: " + _series(outcome["files"]))
    if outcome.get("links"):
        lines.append("Links: " + _series(outcome["links"]))
    if outcome.get("otherUrls"):
        lines.append("Not links (kept as text): " + _series(outcome["otherUrls"]))
    too_big = [s for s in outcome.get("skipped") or [] if not s.get("reason")]
    if too_big:
        limit = outcome.get("maxFileBytes", "")
        lines.append(
            f"Files skipped (over {limit} bytes): " + _series([f"{s['name']} ({s['bytes']} bytes)" for s in too_big])
        )
    refused = [s for s in outcome.get("skipped") or [] if s.get("reason")]
    if refused:  # one reason per outcome: its inbox folder
        lines.append(f"Files not saved ({refused[0]['reason']}): " + _series([s["name"] for s in refused]))
    if outcome.get("partsSkipped") or outcome.get("artifactsSkipped"):
        lines.append(_over_count(outcome))
    if outcome.get("contextId"):
        lines.append(f"Context: {outcome['contextId']}")
    if kind == "question":
        lines.append("To answer: " + (outcome.get("hint") or hint_for(agent, task_id, state)))
    return "\n".join(lines)


def _series(items: list[str]) -> str:
    shown = _listed(items)
    more = f" (and {len(items) - len(shown)} more)" if len(items) > len(shown) else ""
    return ", ".join(shown) + more


def _over_count(outcome: dict[str, Any]) -> str:
    said = []
    if outcome.get("artifactsSkipped"):
        said.append(f"{outcome['artifactsSkipped']} artifacts over the first {MAX_ARTIFACTS}")
    if outcome.get("partsSkipped"):
        said.append(f"{outcome['partsSkipped']} parts over the first {MAX_PARTS}")
    return "Skipped: " + " and ".join(said)


def outcome_event(outcome: dict[str, Any], watch_id: str | None = None) -> dict[str, Any]:
    """The text and data of a RESULT / QUESTION event, for the tool and the watches alike: the final text or
    the question, files, links, skipped files, so the console renders both the same way. (The chat gets the
    spec's header text, `result_text`; the console's history gets this.) An event keeps a preview: at most
    PREVIEW_CHARS of text and LISTED entries of each list (with how many more), so no page grows with what
    an agent sent; texts saved as files are listed first, to link to the whole. Data parts (a question's form
    among them) are kept as bounded previews (`data_parts.event_data_parts`)."""
    body = outcome.get("question") if is_interrupted(str(outcome.get("state", ""))) else outcome.get("text")
    data: dict[str, Any] = {}
    for key in ("files", "links", "skipped", "textFiles", "otherUrls"):
        items = list(outcome.get(key) or [])
        if items or key in ("files", "links", "skipped"):
            data[key] = _listed(items)
        if len(items) > len(data.get(key, [])):
            data[f"{key}More"] = len(items) - len(data[key])
    kept, more = event_data_parts(outcome)
    if kept:
        data["dataParts"] = kept
    if more:
        data["dataPartsMore"] = more
    if watch_id:
        data["watchId"] = watch_id
    for key in ("maxFileBytes", "partsSkipped", "artifactsSkipped"):
        if outcome.get(key):
            data[key] = outcome[key]
    return {"text": preview(str(body or "")), "data": data}


def _listed(items: list[Any]) -> list[Any]:
    """The first items of a list, at most LISTED of them and about LISTED_CHARS characters (at least one)."""
    kept: list[Any] = []
    chars = 0
    for item in items[:LISTED]:
        chars += len(json.dumps(item, ensure_ascii=False))
        if kept and chars > LISTED_CHARS:
            break
        kept.append(item)
    return kept
