"""A form an agent asks the owner to fill in, as the A2A samples shape it, and the owner's answer checked against it.

The samples' convention (a2a-samples: the ADK expense reimbursement agent and the demo UI's `form_render.py`): a
question's data part `{"type": "form", "form": {"type": "object", "properties": {name: {"type", "title",
"description", "format", "enum"}}, "required": [...]}, "form_data": {name: prefilled}, "instructions": "..."}`.
The answer is a data part holding the filled values keyed by field name, as the demo UI sends it back. Fields show
in the order of `ui:order` or `required`, then the rest (the wire's Struct sorts keys: `_order`).

The schema is the agent's, so it is hostile: at most MAX_FIELDS fields (a bigger form, or one the event kept only
a preview of, is not offered as a form), labels, descriptions and values are only ever escaped text, and the
answer is checked here, on the server, against the schema's types, `enum` and `required` (the browser's own
checks are a help, not the rule). Fields are posted as `f0`, `f1`, ... so no agent's name becomes a form key.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import date, datetime, time
from typing import Any

MAX_FIELDS = 100  # fields of a form offered; a bigger one is shown as data only
MAX_LABEL = 200  # characters of a label kept
MAX_HELP = 500  # characters of a description kept
MAX_OPTIONS = 200  # choices of one enum
MAX_VALUE = 10_000  # characters of one typed value
PREFIX = "f"  # a field's POST name: f0, f1, ...

# a string's `format` as the input that edits it; other formats are plain text
_FORMAT_INPUT = {"date": "date", "time": "time", "date-time": "datetime-local", "email": "email"}
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+")


@dataclass(frozen=True)
class Field:
    """One field: `kind` is the input ("text", "date", "time", "datetime-local", "email", "number", "integer",
    "checkbox", "select"); `value` what the box holds (text), `checked` for a checkbox."""

    name: str
    label: str
    help: str
    kind: str
    required: bool
    value: str = ""
    checked: bool = False
    options: tuple[tuple[str, Any], ...] = ()  # (shown, sent) for a select
    error: str = ""
    index: int = 0

    @property
    def key(self) -> str:
        return f"{PREFIX}{self.index}"


@dataclass(frozen=True)
class DataForm:
    instructions: str
    fields: tuple[Field, ...]
    errors: tuple[str, ...] = field(default=())


def is_form(value: Any) -> bool:
    """A data part in the samples' form shape (whatever its size)."""
    return (
        isinstance(value, Mapping)
        and value.get("type") == "form"
        and isinstance(value.get("form"), Mapping)
        and isinstance(value["form"].get("properties"), Mapping)
    )


def form_part(data: Any) -> tuple[int, dict[str, Any]] | None:
    """The first data part of an event's data (`dataParts`) that is a form, with its index (None: none)."""
    parts = data.get("dataParts") if isinstance(data, Mapping) else None
    for i, p in enumerate(parts or ()):
        if isinstance(p, Mapping) and is_form(p.get("data")):
            return i, dict(p)
    return None


def why_not_offered(part: Mapping[str, Any]) -> str:
    """Why a form part is not offered as a form ('' when it is)."""
    if part.get("cut"):
        return "the agent's form is too big to show here in full"
    count = len(part["data"]["form"]["properties"])
    if count > MAX_FIELDS:
        return f"the agent's form has {count:,} fields, over the {MAX_FIELDS} shown here"
    return ""


def form_of(data: Any) -> DataForm | None:
    """The form to offer for an event's data, None when it has no form or one not offered (`why_not_offered`)."""
    found = form_part(data)
    if found is None or why_not_offered(found[1]):
        return None
    spec = found[1]["data"]
    schema = spec["form"]
    required = schema.get("required")
    required_names = {str(r) for r in required} if isinstance(required, list) else set()
    props = {str(k): v for k, v in schema["properties"].items()}
    prefill = spec.get("form_data") if isinstance(spec.get("form_data"), Mapping) else {}
    fields = [
        _field(
            i, name, props[name] if isinstance(props[name], Mapping) else {}, name in required_names, prefill.get(name)
        )
        for i, name in enumerate(_order(props, schema.get("ui:order"), required))
    ]
    instructions = spec.get("instructions")
    return DataForm(_cut(instructions, MAX_HELP * 4) if isinstance(instructions, str) else "", tuple(fields))


def _order(props: Mapping[str, Any], explicit: Any, required: Any) -> list[str]:
    """The fields in the order to show them. A data part crosses the wire as a protobuf Struct, whose keys come out
    sorted, not as the agent wrote them: the order the agent gives in a list is kept instead (`ui:order`, else its
    `required`), and the other fields follow."""
    listed = explicit if isinstance(explicit, list) else required if isinstance(required, list) else []
    first = [str(n) for n in listed if str(n) in props]
    return list(dict.fromkeys([*first, *(str(n) for n in props)]))


def _cut(text: Any, limit: int) -> str:
    s = str(text)
    return s if len(s) <= limit else s[: limit - 1] + "…"


def _field(index: int, name: str, prop: Mapping[str, Any], required: bool, prefilled: Any) -> Field:
    label = _cut(prop.get("title") or name, MAX_LABEL)
    help_text = _cut(prop.get("description") or "", MAX_HELP)
    kind_of = prop.get("type")
    enum = prop.get("enum")
    f = Field(name=name, label=label, help=help_text, kind="text", required=required, index=index)
    if isinstance(enum, list) and enum:
        options = tuple((_cut(v, MAX_LABEL), v) for v in enum[:MAX_OPTIONS] if not isinstance(v, (dict, list)))
        chosen = next((shown for shown, v in options if prefilled is not None and v == prefilled), "")
        return replace(f, kind="select", options=options, value=chosen)
    if kind_of == "boolean":
        return replace(f, kind="checkbox", checked=prefilled is True)
    if kind_of in ("number", "integer"):
        ok = isinstance(prefilled, (int, float)) and not isinstance(prefilled, bool)
        shown = "" if not ok else str(int(prefilled) if float(prefilled).is_integer() else prefilled)
        return replace(f, kind=kind_of, value=shown)
    kind = _FORMAT_INPUT.get(str(prop.get("format") or ""), "text")
    value = "" if prefilled is None or isinstance(prefilled, (dict, list)) else _cut(prefilled, MAX_VALUE)
    if kind != "text" and value and _typed(kind, value)[1]:  # a placeholder ("<transaction date>") the box refuses
        value = ""
    return replace(f, kind=kind, value=value)


def _typed(kind: str, text: str) -> tuple[Any, str]:
    """A non-empty typed value as the answer holds it, and '' or what is wrong with it."""
    try:
        if kind == "integer":
            n = float(text)
            if not n.is_integer():
                return None, "must be a whole number"
            return int(n), ""
        if kind == "number":
            x = float(text)
            if not math.isfinite(x):
                return None, "must be a number"
            return (int(x) if x.is_integer() and "." not in text else x), ""
        if kind == "date":
            return date.fromisoformat(text).isoformat(), ""
        if kind == "time":
            return time.fromisoformat(text).isoformat(timespec="minutes" if len(text) <= 5 else "seconds"), ""
        if kind == "datetime-local":
            return datetime.fromisoformat(text).isoformat(), ""
    except ValueError:
        words = {"integer": "a whole number", "number": "a number", "date": "a date (YYYY-MM-DD)"}
        return None, f"must be {words.get(kind, 'a ' + kind.replace('-local', '') + ' value')}"
    if kind == "email" and not _EMAIL.fullmatch(text):
        return None, "must be an email address"
    return text, ""


def answer(form: DataForm, post: Mapping[str, Any]) -> tuple[dict[str, Any], DataForm]:
    """The owner's filled values (`post`: the request's POST) checked against the form: the data to send, and the
    form holding what was typed with each field's error (no error anywhere: the data is good to send)."""
    values: dict[str, Any] = {}
    shown: list[Field] = []
    problems: list[str] = []
    for f in form.fields:
        raw = post.get(f.key)
        text = "" if raw is None else str(raw)
        error = ""
        if f.kind == "checkbox":
            values[f.name] = raw is not None
            shown.append(replace(f, checked=raw is not None))
            continue
        text = text.strip() if f.kind != "text" else text
        if len(text) > MAX_VALUE:
            error = f"must be at most {MAX_VALUE:,} characters"
        elif not text:
            if f.required:
                error = "is required"
            elif f.kind == "text":
                values[f.name] = ""
        elif f.kind == "select":
            sent = next((v for s, v in f.options if s == text), None)
            if sent is None:
                error = "must be one of the choices"
            else:
                values[f.name] = sent
        else:
            typed, error = _typed(f.kind, text)
            if not error:
                values[f.name] = typed
        if error:
            problems.append(f"{f.label} {error}")
        shown.append(replace(f, value=text[:MAX_VALUE], error=error))
    return values, replace(form, fields=tuple(shown), errors=tuple(problems))
