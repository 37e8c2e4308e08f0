"""The remote wing: everything that crosses the wire to an agent. `Remote` and `Connection` (the calls), the
SDK's types turned into the core's values (`values.py`, by `convert.py`), one map of failures (`errors.py`), the
shared httpx client and its answer budget, the pool of connections, and the limits on calls at once. Only this
wing imports a2a-sdk."""

from a2aconsole.core.remote.client import BINDINGS, Connection, Remote
from a2aconsole.core.remote.convert import MAX_PAGE_TOKEN, TASK_STATES, card_json, outgoing_message
from a2aconsole.core.remote.errors import RemoteError
from a2aconsole.core.remote.http import new_http_client
from a2aconsole.core.remote.limits import CallLimits
from a2aconsole.core.remote.pool import ConnectionPool
from a2aconsole.core.remote.push_body import push_event
from a2aconsole.core.remote.values import (
    ArtifactUpdate,
    MessageValue,
    OutgoingMessage,
    PartValue,
    PushConfigValue,
    StatusUpdate,
    StatusValue,
    TaskEvent,
    TaskPage,
    TaskSnapshot,
    new_id,
)

__all__ = [
    "BINDINGS",
    "MAX_PAGE_TOKEN",
    "TASK_STATES",
    "ArtifactUpdate",
    "CallLimits",
    "Connection",
    "ConnectionPool",
    "MessageValue",
    "OutgoingMessage",
    "PartValue",
    "PushConfigValue",
    "Remote",
    "RemoteError",
    "StatusUpdate",
    "StatusValue",
    "TaskEvent",
    "TaskPage",
    "TaskSnapshot",
    "card_json",
    "new_http_client",
    "new_id",
    "outgoing_message",
    "push_event",
]
