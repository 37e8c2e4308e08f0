"""Answers read leniently where the protocol's meaning is clear (issue 26): the SDK's own strict parse first, and
only when it refuses the answer, the same JSON mended and parsed again.

Agents built on other implementations than the SDKs write what a strict 1.0 parse refuses, and the SDK then
refuses the whole answer: `fasta2a`'s stock storage writes every status timestamp without a time zone
(`2026-12-04T20:59:14.363182`), so no send to such an agent ever worked. Mended here: a timestamp without a zone is
UTC (one that is no time at all is left out: the status is kept without it), a 0.3 task state or role (`working`,
`input-required`, `agent`) is its 1.0 name. An unknown enum value is not a failure (the SDK's parse ignores it);
an unknown task state is kept as text (`keep_states`: "paused" is shown, not "unknown"). The owner sees no
difference: the answer is the one the agent meant.

The transports that give every answer this second chance: `transports.py` (1.0) and `transports_03.py` (0.3).
"""

from __future__ import annotations

import base64
import binascii
from datetime import UTC, datetime
from typing import Any, TypeVar

from a2a.types import Task, TaskState
from a2a.utils.proto_utils import parse_lenient
from google.protobuf.json_format import ParseError
from google.protobuf.message import Message as Proto

from a2aconsole.core.remote.convert import KEPT_STATE, STATE_NAMES

P = TypeVar("P", bound=Proto)

# the members whose values are the application's, not the protocol's: copied as they are
_APPLICATION_KEYS = frozenset({"data", "metadata"})
# 0.3's names (and "cancelled", as some write it) for 1.0's
_STATE_NAMES = {name: TaskState.Name(value) for value, name in STATE_NAMES.items()} | {
    "cancelled": "TASK_STATE_CANCELED",
    "unknown": "TASK_STATE_UNSPECIFIED",
}
_ROLE_NAMES = {"user": "ROLE_USER", "agent": "ROLE_AGENT"}
_LEFT_OUT = object()


def utc_timestamp(text: str) -> str | None:
    """A timestamp as RFC 3339 in UTC (`...Z`): one without a zone is UTC; None when it is no ISO 8601 time."""
    try:
        when = datetime.fromisoformat(text.strip().replace("z", "Z"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _mended(value: Any, key: str = "", enums: bool = True) -> Any:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            item = v if k in _APPLICATION_KEYS else _mended(v, k, enums)
            if item is not _LEFT_OUT:
                out[k] = item
        return out
    if isinstance(value, list):
        return [_mended(v, key, enums) for v in value]
    if not isinstance(value, str):
        return value
    if key == "timestamp":
        stamp = utc_timestamp(value)
        return _LEFT_OUT if stamp is None else stamp
    if key == "state" and enums:
        return _STATE_NAMES.get(value.lower(), value)
    if key == "role" and enums:
        return _ROLE_NAMES.get(value.lower(), value)
    return value


def mended(answer: Any) -> Any:
    """The answer's JSON with what a strict parse refuses mended where the meaning is clear (the module's doc)."""
    return _mended(answer)


def mended_times(answer: Any) -> Any:
    """A protocol 0.3 answer with its timestamps mended (`mended`'s rule): 0.3 names no zone for them, which the
    SDK's conversion to 1.0 refuses; its enums are 0.3's own, and left as they are."""
    return _mended(answer, enums=False)


def _base64_text(data: bytes) -> bool:
    """True when `data` is strict base64 text (its alphabet only, padded): what a2a-sdk 0.3 puts in a file's bytes."""
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _file_bytes(value: Any) -> Any:
    if isinstance(value, list):
        return [_file_bytes(v) for v in value]
    if not isinstance(value, dict):
        return value
    out = {k: v if k in _APPLICATION_KEYS else _file_bytes(v) for k, v in value.items()}
    for key in ("fileWithBytes", "file_with_bytes"):
        said = out.get(key)
        if not isinstance(said, str) or not said:
            continue
        try:
            once = base64.b64decode(said)
        except (binascii.Error, ValueError):
            continue  # not base64 at all: the SDK's reading says so
        if not _base64_text(once):
            out[key] = base64.b64encode(said.encode("ascii")).decode("ascii")
    return out


def raw_file_bytes(answer: Any) -> Any:
    """A protocol 0.3 HTTP+JSON answer whose files' bytes are read as the agent wrote them. The 0.3 proto's
    `fileWithBytes` is a bytes field (base64 in JSON): `@a2a-js/sdk` 0.3 puts the file's bytes there, a2a-sdk 0.3 the
    base64 text of them (encoded twice on the wire), and the SDK's 0.3 reading decodes twice, so every file from a
    JS agent failed the whole answer (`Incorrect padding`) or, worse, read as other bytes. Bytes that decode once to
    no base64 text are the file itself, and are wrapped as a2a-sdk 0.3 writes them; a file that is itself base64
    text reads as a2a-sdk 0.3's (the one case the two cannot be told apart)."""
    return _file_bytes(answer)


def parse_answer(answer: Any, message: P) -> P:
    """The SDK's parse of an answer; when it refuses, the answer mended (`mended`) and parsed again. Raises the
    strict parse's ParseError when the mended answer is refused too. A task state no enum names is kept as text
    (`keep_states`)."""
    try:
        parsed = parse_lenient(answer, message)
    except ParseError as strict:
        message.Clear()
        try:
            parsed = parse_lenient(mended(answer), message)
        except ParseError:
            raise strict from None
    keep_states(answer, parsed)
    return parsed


def _member(value: Any, *names: str) -> Any:
    """A member of a JSON object by any of its names (ProtoJSON reads camelCase and the proto's own)."""
    if isinstance(value, dict):
        for name in names:
            if name in value:
                return value[name]
    return None


def state_word(said: str) -> str:
    """A state as the console writes states: `TASK_STATE_ON_HOLD`, `On hold` -> `on-hold` (64 characters at most)."""
    word = said.strip().removeprefix("TASK_STATE_").lower()
    return "-".join(word.replace("_", " ").replace("-", " ").split())[:64] or "unknown"


def keep_states(answer: Any, parsed: Proto) -> None:
    """A task state the agent said that no 1.0 enum names (the parse left it unspecified) kept as text, in the
    metadata of the task or status update holding it (`convert.KEPT_STATE`): shown as the task's state, where
    it would read `unknown`."""
    if isinstance(parsed, Task):
        holders = [(answer, parsed)]
    else:
        kind = parsed.WhichOneof("payload") if parsed.DESCRIPTOR.oneofs_by_name.get("payload") else None
        if kind == "task":
            holders = [(_member(answer, "task"), parsed.task)]
        elif kind == "status_update":
            holders = [(_member(answer, "statusUpdate", "status_update"), parsed.status_update)]
        else:
            return
    for raw, holder in holders:
        if holder.status.state != TaskState.TASK_STATE_UNSPECIFIED:
            continue
        said = _member(_member(raw, "status"), "state")
        if isinstance(said, str) and said.strip() and said != "TASK_STATE_UNSPECIFIED":
            holder.metadata[KEPT_STATE] = state_word(said)
