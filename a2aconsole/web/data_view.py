"""An agent's data part as the owner reads it: a key/value view (objects as definition lists, their keys sorted,
lists of like objects as tables, other lists as lists, scalars as escaped text), with the JSON beside it for the
toggle.

Every byte is the agent's: each key and value goes through `format_html` (escaped), nothing becomes a link, and
the view is bounded however big the value is (SHOWN_ITEMS members of each list or object, SHOWN_DEPTH levels,
SHOWN_CHARS of a string, each with "… N more"). The event already holds a bounded preview
(`core.data_parts`); these caps keep a page readable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from a2aconsole.web import rich_text
from a2aconsole.web.data_forms import is_form

SHOWN_ITEMS = 50  # members of one list or object shown
SHOWN_DEPTH = 6  # levels shown; deeper ones are in the JSON
SHOWN_CHARS = 500  # characters of one string shown
TABLE_COLUMNS = 8  # a list of objects with at most this many keys, all scalar, shows as a table


@dataclass(frozen=True)
class DataView:
    """One data part ready for `web/_data.html`: its view, its JSON (highlighted), and where it came from."""

    html: SafeString
    json: SafeString
    where: str
    cut: bool  # the event kept a preview: the whole is in the tool's result
    form_fields: int  # a form (the samples' shape) not offered as one: its field count, shown folded; else 0


def view(part: dict[str, Any]) -> DataView:
    """An event's data part (`{"data", "in"[, "cut"]}`) as the page shows it."""
    value = part.get("data")
    return DataView(
        html=value_html(value),
        json=rich_text.json_html(value),
        where=str(part.get("in") or "")[:200],
        cut=bool(part.get("cut")),
        form_fields=len(value["form"]["properties"]) if is_form(value) else 0,
    )


def value_html(value: Any, depth: int = 0) -> SafeString:
    """`value` as nested HTML, escaped and bounded."""
    if isinstance(value, dict):
        if not value:
            return mark_safe('<span class="muted">(empty)</span>')
        if depth >= SHOWN_DEPTH:
            return _deeper(len(value), "fields")
        rows = format_html_join(
            "",
            "<dt>{}</dt><dd>{}</dd>",
            ((_text(k, 200), value_html(value[k], depth + 1)) for k in _keys(value)[:SHOWN_ITEMS]),
        )
        return format_html('<dl class="kv">{}{}</dl>', rows, _more(len(value), "fields", "<dt></dt><dd>{}</dd>"))
    if isinstance(value, list):
        if not value:
            return mark_safe('<span class="muted">(none)</span>')
        if depth >= SHOWN_DEPTH:
            return _deeper(len(value), "items")
        shown = value[:SHOWN_ITEMS]
        columns = _columns(shown)
        if columns:
            head = format_html_join("", "<th>{}</th>", ((_text(c, 200),) for c in columns))
            body = format_html_join(
                "",
                "<tr>{}</tr>",
                ((format_html_join("", "<td>{}</td>", ((_scalar(row.get(c)),) for c in columns)),) for row in shown),
            )
            more = _more(len(value), "rows", f'<tr><td colspan="{len(columns)}">{{}}</td></tr>')
            return format_html(
                '<div class="kv-table"><table><thead><tr>{}</tr></thead><tbody>{}{}</tbody></table></div>',
                head,
                body,
                more,
            )
        items = format_html_join("", "<li>{}</li>", ((value_html(v, depth + 1),) for v in shown))
        return format_html('<ol class="kv-list">{}{}</ol>', items, _more(len(value), "items", "<li>{}</li>"))
    return _scalar(value)


def _keys(obj: dict[Any, Any]) -> list[Any]:
    """An object's keys in a stable order, sorted: a data part crosses the wire as a protobuf Struct, which keeps
    no order of its own."""
    return sorted(obj, key=str)


def _columns(rows: list[Any]) -> list[str]:
    """The keys of a list of like objects (all dicts, scalar values, few keys), or [] when it is no table."""
    if len(rows) < 2 or not all(isinstance(r, dict) for r in rows):
        return []
    columns: set[str] = set()
    for row in rows:
        if any(isinstance(v, (dict, list)) for v in row.values()):
            return []
        columns.update(str(k) for k in row)
    return sorted(columns) if len(columns) <= TABLE_COLUMNS else []


def _scalar(value: Any) -> SafeString:
    if value is None:
        return mark_safe('<span class="kv-null">null</span>')
    if isinstance(value, bool):
        return format_html('<span class="kv-bool">{}</span>', "true" if value else "false")
    if isinstance(value, (int, float)):
        shown = int(value) if isinstance(value, float) and value.is_integer() else value  # a protobuf double
        return format_html('<span class="kv-num">{}</span>', shown)
    if isinstance(value, (dict, list)):
        return format_html('<code class="small">{}</code>', _text(str(value), SHOWN_CHARS))
    return _text(str(value), SHOWN_CHARS)


def _text(text: str, limit: int) -> SafeString:
    if len(text) <= limit:
        return format_html("{}", text)
    return format_html('{}<span class="muted">… ({} more characters)</span>', text[:limit], f"{len(text) - limit:,}")


def _more(total: int, what: str, shape: str) -> SafeString:
    if total <= SHOWN_ITEMS:
        return mark_safe("")
    said = format_html('<span class="muted">… {} more {} (see JSON)</span>', f"{total - SHOWN_ITEMS:,}", what)
    return format_html(shape, said)


def _deeper(total: int, what: str) -> SafeString:
    return format_html('<span class="muted">{} {} nested deeper (see JSON)</span>', f"{total:,}", what)
