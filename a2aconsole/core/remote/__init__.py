from a2aconsole.core.remote.client import Connection, Remote, RemoteError, card_json, new_http_client, outgoing_message
from a2aconsole.core.remote.limits import CallLimits
from a2aconsole.core.remote.pool import ConnectionPool
from a2aconsole.core.remote.values import (
    ArtifactUpdate,
    MessageValue,
    OutgoingMessage,
    PartValue,
    StatusUpdate,
    StatusValue,
    TaskEvent,
    TaskSnapshot,
    new_id,
)

__all__ = [
    "ArtifactUpdate",
    "CallLimits",
    "Connection",
    "ConnectionPool",
    "MessageValue",
    "OutgoingMessage",
    "PartValue",
    "Remote",
    "RemoteError",
    "StatusUpdate",
    "StatusValue",
    "TaskEvent",
    "TaskSnapshot",
    "card_json",
    "new_http_client",
    "new_id",
    "outgoing_message",
]
