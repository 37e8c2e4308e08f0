"""Data parts and forms in the console's pages: a data artifact as a key/value view with its JSON, a question's
form as a real HTML form whose answer is checked on the server and sent as a data part. Real loopback agents (both
SDKs where the wire is touched), the real runtime and event history, pages through the Django test client; hostile
forms (10,000 fields, deep nesting, HTML in titles, `javascript:` values) stay bounded and escaped."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.test import AsyncClient

from a2aconsole.core.files.workspace import Workspace
from a2aconsole.web import broadcast, data_forms, data_view, sends
from a2aconsole.web.models import OutgoingMessage, TaskEvent
from tests.support.agents import FORM, TestAgent
from tests.support.js_agents import SdkAgent
from tests.support.sends import send

pytestmark = pytest.mark.django_db(transaction=True)


def _form_keys(html: str) -> dict[str, str]:
    """The data form's hidden fields and the POST names of its fields by label (`f0`, `f1`, ...)."""
    [form] = re.findall(r'<form class="data-form.*?</form>', html, re.S)
    hidden = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', form))
    labels = dict(re.findall(r'<label for="df-[\w-]+-(f\d+)">([^<*]+?)\s*(?:<|$)', form))
    return {**hidden, **{label.strip(): key for key, label in labels.items()}}


async def _question(owner: AsyncClient, agent: str, message: str) -> tuple[TaskEvent, str]:
    seen = await send(owner, {"agent": agent, "message": message})
    ev = await TaskEvent.objects.filter(kind="question").alatest("id")
    return ev, seen.page


async def test_a_data_artifact_shows_as_keys_and_values_with_its_json(
    ws: Workspace, tool, owner: AsyncClient, agent: TestAgent
) -> None:
    ws.save_agents([{"name": "shop", "url": agent.url}], None)
    seen = await send(owner, {"agent": "shop", "message": "data"})
    ev = await TaskEvent.objects.filter(kind="result").alatest("id")
    pages = {"chat": seen.page, "inbox": (await owner.get("/inbox/console/")).content.decode()}
    pages["task"] = (await owner.get(f"/tasks/shop/{ev.task_id}/?target=console")).content.decode()
    for name, html in pages.items():
        assert '<dt>order</dt><dd><dl class="kv"><dt>id</dt><dd>A-17</dd>' in html, name
        assert '<dt>total</dt><dd><span class="kv-num">42.5</span></dd>' in html, name
        assert '<span class="kv-bool">true</span>' in html and '<span class="kv-null">null</span>' in html, name
        assert "<th>qty</th><th>sku</th>" in html and '<td><span class="kv-num">2</span></td><td>x1</td>' in html
        assert "Ada &lt;b&gt;Lovelace&lt;/b&gt;" in html and "<b>Lovelace" not in html, name
        assert '<details class="data-json"><summary class="small">JSON</summary><pre class="json">' in html, name


async def test_a_form_question_is_a_form_and_its_answer_a_data_part(
    ws: Workspace, tool, owner: AsyncClient, sdk_agent: SdkAgent
) -> None:
    ws.save_agents([{"name": "expenses", "url": sdk_agent.url}], None)
    ev, page = await _question(owner, "expenses", "form")
    assert ev.data["dataParts"][0]["data"] == FORM
    keys = _form_keys(page)
    assert (keys["agent"], keys["task_id"], keys["form_answer"]) == ("expenses", ev.task_id, "1")
    html = re.findall(r'<form class="data-form.*?</form>', page, re.S)[0]
    date, amount, nights = keys["Date"], keys["Amount"], keys["Nights"]
    assert re.search(rf'<input type="date"[^>]*name="{date}" value="2026-12-01" required', html)  # prefilled
    assert re.search(rf'<input type="number" step="any"[^>]*name="{amount}" value="" required', html)
    assert '<option value="travel" selected>travel</option>' in html and 'type="checkbox"' in html
    assert re.search(rf'<input type="number" step="1"[^>]*name="{nights}" value=""(?! required)', html)
    labels = re.findall(r'<label for="df-[\w-]+">([^<*]+?)\s*<', html)
    assert labels[:4] == ["Date", "Amount", "Purpose", "Request ID"]  # `required`'s order: the wire sorts keys
    assert "Request ID" in html and "request_id_1234567" in html

    values = {"Date": "2026-12-02", "Amount": "12.5", "Purpose": "Taxi", "Category": "meals", "Nights": "2"}
    post = {k: keys[k] for k in ("form_answer", "form_key", "agent", "task_id", "context_id")}
    post.update({keys[label]: v for label, v in values.items()})
    post[keys["Request ID"]] = "request_id_1234567"
    r = await owner.post("/chat/console/send/", post, headers={"HX-Request": "true", "HX-Target": "data-form-x"})
    assert r.status_code == 200 and 'id="outgoing-' in r.content.decode()
    await _settled()
    done = await TaskEvent.objects.filter(kind="result", task_id=ev.task_id).alatest("id")
    assert done.state == "completed"
    sent = {"date": "2026-12-02", "amount": 12.5, "purpose": "Taxi", "category": "meals", "nights": 2}
    expected = {**sent, "receipt": False, "request_id": "request_id_1234567"}
    got = [p["data"] for p in sdk_agent.received[-1].parts if "data" in p]
    assert _doubles(got) == _doubles([expected])  # typed by the schema (a protobuf Value holds doubles)
    assert '"purpose":"Taxi"' in done.text
    chat = (await owner.get("/chat/console/")).content.decode()
    assert "<dt>purpose</dt><dd>Taxi</dd>" in chat  # what was sent, and the agent's echo, as key/value views
    assert 'class="data-form' not in chat  # answered: no form any more


async def test_a_wrong_value_sends_the_form_back_with_what_was_typed_and_why(
    ws: Workspace, tool, owner: AsyncClient, agent: TestAgent
) -> None:
    ws.save_agents([{"name": "expenses", "url": agent.url}], None)
    ev, page = await _question(owner, "expenses", "form")
    keys = _form_keys(page)
    post = {k: keys[k] for k in ("form_answer", "form_key", "agent", "task_id", "context_id")}
    post.update({keys["Date"]: "not a date", keys["Amount"]: "12,5x", keys["Purpose"]: "Taxi <b>home</b>"})
    post[keys["Nights"]] = "1.5"
    post[keys["Category"]] = "javascript:alert(1)"
    r = await owner.post("/chat/console/send/", post, headers={"HX-Request": "true", "HX-Target": "data-form-x"})
    html = r.content.decode()
    assert r.status_code == 200
    assert "Date must be a date (YYYY-MM-DD)" in html and "Amount must be a number" in html
    assert "Nights must be a whole number" in html and "Category must be one of the choices" in html
    assert "Request ID is required" in html
    assert 'value="Taxi &lt;b&gt;home&lt;/b&gt;"' in html and 'value="not a date"' in html  # kept, escaped
    assert await OutgoingMessage.objects.acount() == 0 and len(agent.received) == 1  # nothing sent
    plain = await owner.post("/chat/console/send/", post)  # without htmx: a page with the form, a 400
    assert plain.status_code == 400 and "Date must be a date" in plain.content.decode()


async def test_a_form_answer_for_a_task_that_asks_no_form_is_refused(
    ws: Workspace, tool, owner: AsyncClient, agent: TestAgent
) -> None:
    ws.save_agents([{"name": "bot", "url": agent.url}], None)
    ev, _ = await _question(owner, "bot", "ask")
    post = {"form_answer": "1", "agent": "bot", "task_id": ev.task_id, "f0": "x"}
    r = await owner.post("/chat/console/send/", post, headers={"HX-Request": "true"})
    assert "this task asks no form the console can show" in r.content.decode()
    assert await OutgoingMessage.objects.acount() == 0


async def test_hostile_forms_stay_bounded_and_escaped(
    ws: Workspace, tool, owner: AsyncClient, agent: TestAgent
) -> None:
    ws.save_agents([{"name": "evil", "url": agent.url}], None)
    title = '<img src=x onerror=alert(1)>"'
    form = {
        "type": "form",
        "form": {
            "type": "object",
            "properties": {
                "site": {"type": "string", "title": title, "description": "<script>alert(2)</script>"},
                "go": {"type": "string", "enum": ["javascript:alert(3)", '"><b>x</b>']},
            },
            "required": ["site"],
        },
        "form_data": {"site": "javascript:alert(4)"},
        "instructions": "<a href='javascript:alert(5)'>click</a>",
    }
    _, page = await _question(owner, "evil", f"rawform {json.dumps(form)}")
    html = re.findall(r'<form class="data-form.*?</form>', page, re.S)[0]
    assert "&lt;img src=x onerror=alert(1)&gt;&quot;" in html and "<img" not in html
    assert "&lt;script&gt;" in html and "<script" not in html and "<b>x</b>" not in html
    assert 'value="javascript:alert(4)"' in html and not re.search(r"<a [^>]*href=[\"']?javascript", page)

    wide = {
        "type": "form",
        "form": {"type": "object", "properties": {f"f{i}": {"type": "string"} for i in range(10_000)}},
    }
    _, page = await _question(owner, "evil", f"rawform {json.dumps(wide)}")
    assert "Data too big to show (saved as a file" in page and page.count('class="data-form') == 1  # the first
    assert len(page.encode()) < 1024 * 1024

    many = {"type": "form", "form": {"type": "object", "properties": {f"f{i}": {"type": "string"} for i in range(150)}}}
    _, page = await _question(owner, "evil", f"rawform {json.dumps(many)}")
    assert "Not shown as a form: the agent&#x27;s form has 150 fields, over the 100 shown here" in page
    assert page.count('class="data-form') == 1
    assert "… 100 more fields (see JSON)" in page  # its key/value view, bounded too

    deep: Any = {"bottom": True}
    for _ in range(20):  # more would pass protobuf's own depth limit, at the agent
        deep = {"down": deep}
    _, page = await _question(owner, "evil", f"rawform {json.dumps(deep)}")
    assert page.count('<dl class="kv"><dt>down</dt>') <= data_view.SHOWN_DEPTH * 2 + 1
    assert "nested deeper (see JSON)" in page and "nested deeper than 12 levels" in page


def test_the_key_value_view_is_bounded_and_escaped() -> None:
    html = data_view.value_html({"<k>": "x" * 2_000, "list": list(range(500)), "n": 3.0})
    assert "<dt>&lt;k&gt;</dt>" in html and "(1,500 more characters)" in html
    assert "… 450 more items (see JSON)" in html and html.count("<li>") == data_view.SHOWN_ITEMS + 1
    assert '<span class="kv-num">3</span>' in html  # a protobuf double that is a whole number


def test_a_form_answer_is_typed_by_the_schema() -> None:
    df = data_forms.form_of({"dataParts": [{"data": FORM, "in": "message"}]})
    assert df is not None and [(f.name, f.kind) for f in df.fields] == [
        ("date", "date"), ("amount", "number"), ("purpose", "text"), ("request_id", "text"),
        ("category", "select"), ("nights", "integer"), ("receipt", "checkbox"),
    ]  # fmt: skip
    post = {"f0": "2026-01-31", "f1": "7", "f2": "", "f3": "r-1", "f4": "other", "f5": "", "f6": "1"}
    values, checked = data_forms.answer(df, post)
    assert checked.errors == ("Purpose is required",)
    post["f2"] = "Lunch"
    values, checked = data_forms.answer(df, post)
    assert checked.errors == ()
    filled = {"date": "2026-01-31", "amount": 7, "purpose": "Lunch", "category": "other", "receipt": True}
    assert values == {**filled, "request_id": "r-1"}


def _doubles(value: Any) -> Any:
    return json.loads(json.dumps(value), parse_int=float)


async def _settled() -> None:
    await sends.settled()
    await broadcast.flush()
