"""The `a2a` tool's arguments, one contract for every way in, and the JSON schema a model is offered.

`ARGUMENTS` says, once, what each argument is: its name, what it means, its limits and which actions need
it. Everything else is derived from it: `TOOL_SCHEMA` (the model's tool list, `/api/v1/tool-schema`), the
JSON API's body schema and checks (`api/calls.py`, published in openapi.json), the console's send form
(`web/forms.py`) and the shell's options (`manage.py a2a`). A limit changed here changes all of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from a2aconsole.core.data_parts import MAX_DATA
from a2aconsole.core.files import NAME_MAX_LENGTH

ACTIONS = ("agents", "send", "status", "cancel", "unwatch")

MAX_MESSAGE = 1_000_000  # characters of a message
MAX_REF = 200  # characters of a contextId or taskId
MAX_PATH = 1000  # characters of one attached file's workspace path
MAX_FILES = 50  # files attached to one send

SEND_NEEDS = "send needs a message, files or data"  # the one rule across members: a send carries something
TARGET_HELP = "the chat target whose workspace, agents and hop count the action uses"
# a value that must say something: not empty, not only blanks
NOT_BLANK: dict[str, Any] = {"minLength": 1, "pattern": r"\S"}


@dataclass(frozen=True)
class Argument:
    """One argument of the tool. `max_length` caps a string, each path of a list (`max_items` > 0), or the JSON of
    an object (`is_object`).

    `description` is what a model, an API host and the shell read; `label` and `help` are the console form's
    words for its owner; `flags` are the shell's option names; `needed_by` the actions that cannot go without it.
    """

    name: str
    description: str
    max_length: int
    label: str
    help: str
    flags: tuple[str, ...]
    max_items: int = 0
    needed_by: tuple[str, ...] = ()
    is_object: bool = False

    @property
    def is_list(self) -> bool:
        return self.max_items > 0

    @property
    def field(self) -> str:
        """The console form's field name: `contextId` -> `context_id`."""
        return "".join(f"_{c.lower()}" if c.isupper() else c for c in self.name)

    def schema(self) -> dict[str, Any]:
        """This argument's JSON schema, limits included."""
        if self.is_list:
            items = {"type": "string", **NOT_BLANK, "maxLength": self.max_length}
            return {"type": "array", "items": items, "maxItems": self.max_items, "description": self.description}
        if self.is_object:  # its size is checked as JSON (`max_length` bytes), which a schema cannot say
            return {"type": "object", "description": self.description}
        return {"type": "string", "maxLength": self.max_length, "description": self.description}


ARGUMENTS: tuple[Argument, ...] = (
    Argument(
        "agent",
        "the agent's name from action=agents (send, status, cancel, unwatch)",
        NAME_MAX_LENGTH,
        label="Agent",
        help="",
        flags=("--agent",),
        needed_by=("send", "status", "cancel", "unwatch"),
    ),
    Argument(
        "message",
        "the text to send (send)",
        MAX_MESSAGE,
        label="Message",
        help="",
        flags=("--message", "-m"),
    ),
    Argument(
        "contextId",
        "continue this conversation with the agent (send)",
        MAX_REF,
        label="Continue context",
        help="The context id of an earlier exchange with this agent",
        flags=("--context-id",),
    ),
    Argument(
        "taskId",
        "the task to answer (send after a question), check (status), cancel (cancel) or stop watching (unwatch)",
        MAX_REF,
        label="Answer task",
        help="The task id of a question you answer",
        flags=("--task-id",),
        needed_by=("status", "cancel", "unwatch"),
    ),
    Argument(
        "files",
        "workspace-relative paths of files to attach (send)",
        MAX_PATH,
        label="Attach files",
        help="Stored in the workspace under uploads/ and sent with the message",
        flags=("--file",),
        max_items=MAX_FILES,
    ),
    Argument(
        "data",
        "a JSON object sent as a data part (send): the filled values of an agent's form, keyed by field name; "
        f"at most {MAX_DATA:,} bytes as JSON",
        MAX_DATA,
        label="Data",
        help="A JSON object sent as a data part, e.g. the values of an agent's form",
        flags=("--data",),
        is_object=True,
    ),
)
ARGUMENT = {a.name: a for a in ARGUMENTS}


def needs(action: str) -> tuple[str, ...]:
    """The arguments `action` cannot go without (a send also needs a message, files or data: SEND_NEEDS)."""
    return tuple(a.name for a in ARGUMENTS if action in a.needed_by)


TOOL_SCHEMA: dict[str, Any] = {
    "name": "a2a",
    "description": (
        "Use remote agents over the A2A protocol. action=agents lists them with their skills; action=send hands "
        "one a message (and workspace files, or data: a JSON object such as a filled form) and returns its answer, "
        "its question (answer with send and the taskId), or, for long work, a note that the result will arrive in "
        "this conversation by itself; action=status checks a task; action=cancel cancels one; action=unwatch stops "
        "watching one (the task goes on at the agent; its result no longer comes here)."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": list(ACTIONS), "description": "what to do"},
            **{a.name: a.schema() for a in ARGUMENTS},
        },
        "required": ["action"],
        "additionalProperties": False,
    },
}
