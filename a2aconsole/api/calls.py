"""A tool call as an agent host posts it: parsed and checked before anything reaches an agent.

There is one argument contract: the core tool's `ARGUMENTS` (`core/tool_schema.py`). The API's body schema
(`call_schema`, published in openapi.json) is the tool's own schema, limits included, plus what only an
HTTP boundary needs (the host's `hops`, which action needs which member), and `parse_call` checks a body
against it, so a member added to the tool is checked here and documented there without a second list.
A bad body is refused with the member at fault and what is wrong with it; nothing is sent anywhere
until the whole body is valid.
"""

from __future__ import annotations

import copy
import functools
import re
from dataclasses import dataclass, field
from typing import Any

from a2aconsole.core.chat import MAX_HOPS
from a2aconsole.core.data_parts import send_data
from a2aconsole.core.errors import ToolError
from a2aconsole.core.tool import ARGUMENT, MAX_REF, NOT_BLANK, SEND_NEEDS, TOOL_SCHEMA, needs

_HOPS = {
    "type": "integer",
    "minimum": 0,
    "maximum": MAX_HOPS,
    "description": "hop count of the inbound message that led to this call; outgoing = hops + 1 (added by the host)",
}
# the members each action needs besides `action` (send also needs a message, files or data)
NEEDS: dict[str, tuple[str, ...]] = {
    action: needs(action) for action in TOOL_SCHEMA["parameters"]["properties"]["action"]["enum"]
}


class BadCall(Exception):
    """A body the API refuses: `field` names the member (None: the body itself), `problem` says why."""

    def __init__(self, field: str | None, problem: str) -> None:
        super().__init__(problem)
        self.field = field
        self.problem = problem

    def to_json(self) -> dict[str, Any]:
        return {"error": self.problem, "field": self.field}


@dataclass
class ToolCall:
    action: str
    args: dict[str, Any] = field(default_factory=dict)
    hops: int | None = None


@functools.cache
def _schema() -> dict[str, Any]:
    schema = copy.deepcopy(TOOL_SCHEMA["parameters"])
    schema["properties"]["hops"] = dict(_HOPS)
    rules: list[dict[str, Any]] = []
    for action, needed in NEEDS.items():
        then: dict[str, Any] = {}
        if needed:
            then = {"required": list(needed), "properties": {n: dict(NOT_BLANK) for n in needed}}
        if action == "send":
            then["anyOf"] = [
                {"required": ["message"], "properties": {"message": dict(NOT_BLANK)}},
                {"required": ["files"], "properties": {"files": {"minItems": 1}}},
                {"required": ["data"]},
            ]
        if then:
            rules.append({"if": {"properties": {"action": {"const": action}}}, "then": then})
    schema["allOf"] = rules
    return schema


def call_schema() -> dict[str, Any]:
    """The JSON schema of a call's body: the tool's parameters, plus `hops` and the per-action needs."""
    return copy.deepcopy(_schema())


ACTIONS: tuple[str, ...] = tuple(_schema()["properties"]["action"]["enum"])
FIELDS: tuple[str, ...] = tuple(_schema()["properties"])


# What `NOT_BLANK`'s pattern (`\S`) means to a JSON Schema validator: ECMA-262's white space, which is not Python's
# (`str.strip` also takes away U+001C-U+001F and U+0085, so a path or a name the schema allows was refused).
SCHEMA_NOT_BLANK = re.compile("[^\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]")


def _text(label: str, value: object, cap: int, member: str) -> str:
    """`value` as a string the rest of the console can store and send: UTF-8 encodable, at most `cap` characters."""
    if not isinstance(value, str):
        raise BadCall(member, f"{label} must be a string")
    if len(value) > cap:
        raise BadCall(member, f"{label} must be at most {cap} characters (it has {len(value)})")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise BadCall(
            member,
            f"{label} is not valid Unicode text: a lone surrogate (\\u{ord(value[e.start]):04x}) at character "
            f"{e.start}; send UTF-8 text",
        ) from None
    return value


def _member(name: str, value: object, spec: dict[str, Any]) -> Any:
    """One member checked against its schema: its type, caps, and that every string in it is real text."""
    kind = spec.get("type")
    if value is None:  # the schema has no null: a host that means "none" leaves the member out
        raise BadCall(name, f"{name} must not be null: leave it out, or give a {kind or 'value'}")
    if "enum" in spec:  # one of a few names (`action`): nothing else to check
        if value not in spec["enum"]:
            raise BadCall(name, f"{name} must be one of {', '.join(spec['enum'])}")
        return value
    if kind == "string":
        return _text(name, value, spec["maxLength"], name)
    if kind == "array":
        if not isinstance(value, list):
            raise BadCall(name, f"{name} must be a list of workspace paths (non-empty strings)")
        if len(value) > spec["maxItems"]:
            raise BadCall(name, f"{name} must list at most {spec['maxItems']} paths (it has {len(value)})")
        items = spec["items"]
        for i, item in enumerate(value):
            if not isinstance(item, str) or not SCHEMA_NOT_BLANK.search(item):
                what = "blank" if isinstance(item, str) else "not a string"
                raise BadCall(
                    name, f"{name} must be a list of workspace paths (non-empty strings): {name}[{i}] is {what}"
                )
            _text(f"{name}[{i}]", item, items["maxLength"], name)
        return value
    if kind == "object":  # `data`: a JSON object, its size as JSON (which a schema cannot cap) by the contract's rule
        try:
            return send_data(value, ARGUMENT[name].max_length)
        except ToolError as e:
            raise BadCall(name, str(e)) from None
    if kind == "integer":
        if isinstance(value, float) and value.is_integer():  # JSON has one number type: 2.0 is the integer 2
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or not spec["minimum"] <= value <= spec["maximum"]:
            raise BadCall(name, f"{name} must be a whole number from {spec['minimum']} to {spec['maximum']}")
        return value
    raise AssertionError(f"the call schema has a member of type {kind!r}")  # a new type in TOOL_SCHEMA: teach it here


def parse_call(data: object) -> ToolCall:
    """The call in `data` (decoded JSON), or BadCall naming the first problem."""
    schema = _schema()
    props: dict[str, dict[str, Any]] = schema["properties"]
    if not isinstance(data, dict):
        raise BadCall(None, "the body must be a JSON object")
    unknown = sorted((k for k in data if k not in props), key=str)
    if unknown:
        shown = unknown[0][:MAX_REF].encode("utf-8", "backslashreplace").decode("utf-8")  # a name may be no text
        raise BadCall(shown, f"unknown field {shown!r}; allowed: {', '.join(FIELDS)}")
    if data.get("action") is None:
        raise BadCall("action", "action is required: one of " + ", ".join(ACTIONS))
    values = {name: _member(name, data[name], props[name]) for name in props if name in data}
    action: str = values.pop("action")
    hops: int | None = values.pop("hops", None)
    for name in NEEDS[action]:
        if name not in values:
            raise BadCall(name, f"{name} is required for {action}")
        if not SCHEMA_NOT_BLANK.search(values[name]):
            raise BadCall(name, f"{name} must not be empty")
    if (
        action == "send"
        and not SCHEMA_NOT_BLANK.search(values.get("message") or "")
        and not values.get("files")
        and values.get("data") is None
    ):
        raise BadCall("message", f"{SEND_NEEDS} (a non-empty message, workspace paths in files, or a data object)")
    return ToolCall(action=action, args=values, hops=hops)
