"""One partial per component: the task card, the state badge, the progress line, the answer panel, an agent's text,
a short id and the copy button are each written by their partial only, and included wherever they show. Each
component has a mark only its partial writes (a class, an attribute); no other template and no Python module of
the console writes it, so a copy drawn inline elsewhere fails here."""

from __future__ import annotations

import re
from pathlib import Path

from django.template.loader import render_to_string

import a2aconsole
from a2aconsole.web.templatetags.text import agent_text, short_id

ROOT = Path(a2aconsole.__file__).parent.parent
TEMPLATES = ROOT / "templates"

# each mark of a component -> the partials that may write it
OUTCOME = {"web/_outcome.html", "web/_outcome_later.html"}  # the answer panel, and its place before the agent answers
MARKS = {
    r'class="task-card ': {"web/_task_card.html"},
    r"data-task-state": {"web/_state.html"},
    r'class="badge state-\{\{': {"web/_state.html"},  # a badge of a task's state (fixed labels have their own)
    r"progress-line": {"web/_progress.html"},
    r"<progress\b": {"web/_progress.html"},
    r'id="outcome-': OUTCOME,
    r"data-agent-text": {"web/_text.html"},
    r'class="short-id"': {"web/_id.html"},
    r"data-copy": {"web/_copy.html"},
}


def writers_of(mark: str) -> set[str]:
    """The templates (by name) and the console's Python modules (by path) whose text has `mark`."""
    found = {str(p.relative_to(TEMPLATES)) for p in TEMPLATES.rglob("*.html") if re.search(mark, p.read_text())}
    code = ROOT / "a2aconsole"
    return found | {str(p.relative_to(ROOT)) for p in code.rglob("*.py") if re.search(mark, p.read_text())}


def test_each_component_is_written_by_its_partial_only() -> None:
    wrong = {mark: sorted(writers_of(mark)) for mark, partials in MARKS.items() if writers_of(mark) != partials}
    assert wrong == {}


def test_the_partials_are_what_the_pages_render() -> None:
    """Not vacuous: the marks are in what the tags render (the id's copy button, an agent text's own)."""
    shown = short_id("0123456789abcdef", "task id")
    assert shown["short"] == "01234567…"
    html = render_to_string("web/_id.html", shown)
    assert 'class="short-id"' in html and 'data-copy="0123456789abcdef"' in html and "Copy the whole task id" in html
    text = render_to_string("web/_text.html", agent_text("hello"))
    assert "data-agent-text" in text and '<button type="button" class="linkish" data-copy>Copy</button>' in text
