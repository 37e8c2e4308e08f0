"""The tool wing: the `a2a` tool's actions (`tool.py`), one module each where an action is long (`send.py`,
`cancel.py`, `unwatch.py`, `status.py`, `adopt.py`: the console's `watch`), its arguments, schema and events.
What the web and the API call."""

from a2aconsole.core.tool.adopt import WATCH
from a2aconsole.core.tool.cancel import CANCEL_REQUESTED
from a2aconsole.core.tool.schema import (
    ACTIONS,
    ARGUMENT,
    ARGUMENTS,
    MAX_REF,
    NOT_BLANK,
    SEND_NEEDS,
    TARGET_HELP,
    TOOL_SCHEMA,
    Argument,
    needs,
)
from a2aconsole.core.tool.status import age, status_report
from a2aconsole.core.tool.tool import CLIENT_OFF, A2ATool

__all__ = [
    "A2ATool",
    "ACTIONS",
    "ARGUMENT",
    "ARGUMENTS",
    "Argument",
    "CANCEL_REQUESTED",
    "CLIENT_OFF",
    "MAX_REF",
    "NOT_BLANK",
    "SEND_NEEDS",
    "TARGET_HELP",
    "TOOL_SCHEMA",
    "WATCH",
    "age",
    "needs",
    "status_report",
]
