# ruff: noqa: F811  (the `owner` fixture imported from test_tasks_page, then requested by name)
"""Free text on the Tasks page through `TaskRecord.search_words` (each word of the ids and texts once, lower case):
the same tasks found as a search of the texts themselves, whether few or many tasks have the word."""

from __future__ import annotations

import importlib
from datetime import timedelta

import pytest
from django.apps import apps
from django.test import Client

from a2aconsole.web import task_search
from a2aconsole.web.models import TaskRecord
from a2aconsole.web.task_index import search_words
from tests.web.test_tasks_page import T0, emit, finished, owner, rows  # noqa: F401  (owner: a fixture)

pytestmark = pytest.mark.django_db


def found(client: Client, q: str) -> list[str]:
    r = client.get("/tasks/", {"q": q})
    assert r.status_code == 200
    return rows(r.content.decode())


def test_words_inside_words_any_case_and_phrases(owner: Client) -> None:
    finished("t-lis", "Here is the itinerary for LISBON, day by day. " * 20)
    finished("t-mu", "Die Übersicht für München", at=T0 + timedelta(hours=1))
    record = TaskRecord.objects.get(task_id="t-lis")
    assert record.search_words.count("lisbon,") == 1 and len(record.search_words) < 100  # each word once
    assert found(owner, "isbo") == ["t-lis"] and found(owner, "Lisbon,") == ["t-lis"]  # inside a word, any case
    assert found(owner, "ÜBERSICHT") == ["t-mu"] and found(owner, "münch") == ["t-mu"]  # not only ASCII
    assert found(owner, '"for lisbon"') == ["t-lis"] and found(owner, '"lisbon for"') == []  # a phrase, in order
    assert found(owner, "is") == ["t-lis"] and found(owner, "t-") == ["t-mu", "t-lis"]  # short words too
    assert found(owner, "itinerary münchen") == []  # every word must be there


def test_a_word_many_tasks_have_and_one_few_have(owner: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(task_search, "MANY", 40)  # more than this: matched row by row, not through the index
    many = task_search.MANY + 20
    records = []
    for i in range(many):
        r = TaskRecord(
            agent="Poet" if i % 2 else "bot",
            task_id=f"task-{i:04d}",
            target="console",
            state="completed",
            last_text=f"a poem about the sea {'and a lighthouse' if i in (7, 30) else ''}",
            started_at=T0 + timedelta(minutes=i),
            updated_at=T0 + timedelta(minutes=i),
            events=1,
        )
        r.search_words = search_words(r)
        records.append(r)
    TaskRecord.objects.bulk_create(records)
    page = owner.get("/tasks/", {"q": "SEA"}).content.decode()  # more than FEW: matched row by row
    assert f"of {many} tasks" in page and rows(page)[0] == f"task-{many - 1:04d}"
    assert found(owner, "lighthouse") == ["task-0030", "task-0007"]  # few: by their ids
    assert found(owner, "agent:poet lighthouse") == ["task-0007"]  # an agent's name in any case
    assert found(owner, "agent:POET state:completed lighthouse") == ["task-0007"]
    assert found(owner, "agent:poet sea")[:2] == [f"task-{many - 1:04d}", f"task-{many - 3:04d}"]
    assert "look further back" not in page  # a common word is no bounded search: a page is found at once


def test_a_later_text_is_searchable_and_the_old_one_gone(owner: Client) -> None:
    emit("t-1", "state", "working", "looking at flights", at=T0)
    assert found(owner, "flights") == ["t-1"]
    emit("t-1", "state", "working", "looking at hotels", at=T0 + timedelta(minutes=1))
    assert found(owner, "hotels") == ["t-1"] and found(owner, "flights") == []


def test_migration_fills_the_words_of_tasks_already_there() -> None:
    finished("t-old", "an older answer")
    TaskRecord.objects.update(search_words="")  # as the rows were before the column
    migration = importlib.import_module("a2aconsole.web.migrations.0009_task_search_words")
    migration.backfill(apps, None)
    assert TaskRecord.objects.get().search_words == search_words(TaskRecord.objects.get())
    assert "older" in TaskRecord.objects.get().search_words
