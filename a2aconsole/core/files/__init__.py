"""The files wing: a workspace folder (its lock and `agents.json`), atomic locked writes, the owner's attachments
and the inbox folder results are saved in. Everything above reads and writes files through it."""

from a2aconsole.core.files.agents import (
    NAME_MAX_LENGTH,
    NAME_PATTERN,
    AgentEntry,
    is_http_url,
    is_origin,
    mask_url,
    origin,
)
from a2aconsole.core.files.atomic import (
    Signature,
    append_locked,
    atomic_write,
    file_signature,
    lock_for,
    mark_seen,
    read_bytes,
    stat_signature,
    try_flock,
    version_of,
    write_locked,
    written_here,
)
from a2aconsole.core.files.attachments import Attachment, read_attachments
from a2aconsole.core.files.inbox import InboxFolder, OutsideWorkspace
from a2aconsole.core.files.workspace import AgentsFile, Workspace

__all__ = [
    "AgentEntry",
    "AgentsFile",
    "Attachment",
    "InboxFolder",
    "NAME_MAX_LENGTH",
    "NAME_PATTERN",
    "OutsideWorkspace",
    "Signature",
    "Workspace",
    "append_locked",
    "atomic_write",
    "file_signature",
    "is_http_url",
    "is_origin",
    "lock_for",
    "mark_seen",
    "mask_url",
    "origin",
    "read_attachments",
    "read_bytes",
    "stat_signature",
    "try_flock",
    "version_of",
    "write_locked",
    "written_here",
]
