"""Data parts through the tool on both SDKs: an agent's data artifact, a question that carries a form, and a send
that answers it with a data part (`data`); hostile data (huge, deep) stays bounded in the events."""

from __future__ import annotations

import json
from typing import Any

import pytest

from a2aconsole.core.data_parts import MAX_DATA, MAX_DATA_PARTS, MAX_DEPTH, MAX_ITEMS, event_data_parts
from a2aconsole.core.events import QUESTION, RESULT, SENT, MemorySink
from a2aconsole.core.files.workspace import Workspace
from tests.support.agents import DATA, FORM, TestAgent
from tests.support.js_agents import SdkAgent
from tests.support.toolkit import TARGET, entry, make_tool, write_agents


def _floats(value: Any) -> Any:
    """`value` as it comes back over the wire: a protobuf Value holds every number as a double."""
    return json.loads(json.dumps(value), parse_int=float)


async def test_a_data_artifact_is_kept_whole_and_in_the_event(http, workspace: Workspace, sdk_agent: SdkAgent) -> None:
    write_agents(workspace, entry("shop", sdk_agent))
    sink = MemorySink()
    result = await make_tool(http, workspace, events=sink).run("send", {"agent": "shop", "message": "data"}, TARGET)
    assert result["state"] == "completed" and result["text"] == "here is the order"
    [art] = result["artifacts"]
    assert art["name"] == "order" and _floats(art["parts"]) == _floats([{"data": DATA}])
    [event] = [e for e in sink.events if e.kind == RESULT]
    assert event.data is not None
    assert _floats(event.data["dataParts"]) == _floats([{"data": DATA, "in": "order"}])


async def test_a_form_question_carries_its_form_and_a_data_answer_completes_it(
    http, workspace: Workspace, sdk_agent: SdkAgent
) -> None:
    """Before: the status message's data part was dropped, so a question's form never reached the console."""
    write_agents(workspace, entry("expenses", sdk_agent))
    sink = MemorySink()
    tool = make_tool(http, workspace, events=sink)
    asked = await tool.run("send", {"agent": "expenses", "message": "form"}, TARGET)
    assert asked["state"] == "input-required" and asked["question"] == "Please fill in the expense form"
    assert asked["messageData"] == [{"data": FORM}]  # no number in it: nothing turned into a double
    [question] = [e for e in sink.events if e.kind == QUESTION]
    assert question.data is not None and question.data["dataParts"] == [{"data": FORM, "in": "message"}]

    values = {"date": "2026-12-02", "amount": 12.5, "purpose": "Taxi", "request_id": "request_id_1234567"}
    answer = {"agent": "expenses", "data": values, "taskId": asked["taskId"], "contextId": asked["contextId"]}
    done = await tool.run("send", answer, TARGET)
    assert done["state"] == "completed", done
    assert '"purpose":"Taxi"' in done["text"] and '"amount":12.5' in done["text"]
    assert done["artifacts"][0]["parts"] == [{"data": {"received": values}}]
    got = sdk_agent.received[-1]
    assert got.task_id == asked["taskId"] and got.text == ""
    assert [p["data"] for p in got.parts if "data" in p] == [values]
    [sent] = [e for e in sink.events if e.kind == SENT and e.task_id == asked["taskId"] and e.data]
    assert sent.data == {"data": values}  # the history keeps what was answered


@pytest.mark.parametrize(
    ("data", "error"),
    [
        ([1, 2], "data must be a JSON object"),
        ("text", "data must be a JSON object"),
        ({"x": "y" * MAX_DATA}, f"data must be at most {MAX_DATA} bytes as JSON"),
        ({"x": float("nan")}, "data must be plain JSON"),
    ],
)
async def test_bad_data_is_refused_before_anything_is_sent(
    http, workspace: Workspace, agent: TestAgent, data: Any, error: str
) -> None:
    write_agents(workspace, entry("echo", agent))
    result = await make_tool(http, workspace).run("send", {"agent": "echo", "data": data}, TARGET)
    assert result["error"].startswith(error)
    assert agent.received == []


async def test_an_empty_send_names_data_too(http, workspace: Workspace, agent: TestAgent) -> None:
    write_agents(workspace, entry("echo", agent))
    result = await make_tool(http, workspace).run("send", {"agent": "echo"}, TARGET)
    assert result == {"error": "send needs a message, files or data"}


async def test_a_huge_form_is_saved_as_a_file_and_the_event_names_it(
    http, workspace: Workspace, agent: TestAgent
) -> None:
    write_agents(workspace, entry("evil", agent))
    fields = {f"f{i}": {"type": "string", "title": f"<b>Field {i}</b>"} for i in range(10_000)}
    form = {"type": "form", "form": {"type": "object", "properties": fields}}
    sink = MemorySink()
    asked = await make_tool(http, workspace, events=sink).run(
        "send", {"agent": "evil", "message": f"rawform {json.dumps(form)}"}, TARGET
    )
    assert asked["state"] == "input-required"
    [part] = asked["messageData"]
    assert part["dataFile"].startswith("inbox/a2a/evil/") and part["dataFile"].endswith(".json")
    [question] = [e for e in sink.events if e.kind == QUESTION]
    assert question.data is not None
    assert question.data["dataParts"] == [{"file": part["dataFile"], "chars": part["chars"], "in": "message"}]
    assert len(json.dumps(question.data)) < 2_000


def test_an_event_keeps_a_bounded_preview_of_deep_long_and_many_data_parts() -> None:
    deep: Any = "bottom"
    for _ in range(50):
        deep = {"down": deep}
    wide = {f"k{i}": i for i in range(1_000)}
    parts = [{"data": deep}, {"data": wide}, {"data": ["x" * 10_000]}, *({"data": i} for i in range(30))]
    kept, more = event_data_parts({"messageData": parts})
    assert len(kept) == MAX_DATA_PARTS and more == len(parts) - MAX_DATA_PARTS
    text = json.dumps(kept[0]["data"])
    assert text.count("down") == MAX_DEPTH and f"nested deeper than {MAX_DEPTH} levels" in text
    assert kept[0]["cut"] is True
    assert len(kept[1]["data"]) == MAX_ITEMS + 1 and kept[1]["data"]["…"] == f"{1_000 - MAX_ITEMS} more fields"
    assert kept[2]["data"][0].endswith("(5,904 more characters)") and kept[2]["cut"] is True
    assert "cut" not in kept[3]
    assert len(json.dumps(kept)) < 40_000
