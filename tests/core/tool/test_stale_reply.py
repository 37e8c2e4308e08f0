"""The stale-reply rule: a reply to a send on an existing task that still shows the interrupted status from
before the send is not the outcome (issue 10, bug 1; seen on @a2a-js/sdk 1.3, tested on the wire in
test_tool_send.py and test_watches.py). Here the two kinds of evidence, one by one, on built tasks, and the
marker a watch record keeps so the watch skips that status too."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from a2a.types import Message, Part, Role, Task, TaskState, TaskStatus

from a2aconsole.core.pending.records import WatchRecord
from a2aconsole.core.remote.convert import status_value, task_snapshot
from a2aconsole.core.remote.values import OutgoingMessage, TaskSnapshot
from a2aconsole.core.tool.send import stale_marker, stale_status
from a2aconsole.core.watches.follower import is_stale

SENT_AT = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def _message(message_id: str, role: Role, text: str) -> Message:
    return Message(message_id=message_id, role=role, parts=[Part(text=text)])


def _sdk_task(state: TaskState, *, history: list[str], at: datetime | None = None) -> Task:
    status = TaskStatus(state=state, message=_message("question", Role.ROLE_AGENT, "Which colour?"))
    if at is not None:
        status.timestamp.FromDatetime(at)
    roles = {"question": Role.ROLE_AGENT}
    return Task(
        id="t1",
        context_id="c1",
        status=status,
        history=[_message(m, roles.get(m, Role.ROLE_USER), m) for m in history],
    )


def _task(state: TaskState, *, history: list[str], at: datetime | None = None) -> TaskSnapshot:
    """The task as the agent's SDK sends it, read as the core reads it (`convert.task_snapshot`)."""
    return task_snapshot(_sdk_task(state, history=history, at=at))


ANSWER = OutgoingMessage("blue", task_id="t1", message_id="answer")


@pytest.mark.parametrize("state", [TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED])
def test_question_before_the_answer_in_history_is_stale(state: TaskState) -> None:
    reply = _task(state, history=["ask", "question", "answer"], at=SENT_AT + timedelta(hours=1))
    assert stale_status(reply, ANSWER, SENT_AT) == reply.status  # history wins over a clock that runs ahead


def test_question_after_the_answer_in_history_is_new() -> None:
    reply = _task(TaskState.TASK_STATE_INPUT_REQUIRED, history=["ask", "answer", "question"])
    assert stale_status(reply, ANSWER, SENT_AT) is None


def test_without_history_a_timestamp_not_after_the_send_is_stale() -> None:
    assert stale_status(_task(TaskState.TASK_STATE_INPUT_REQUIRED, history=[], at=SENT_AT), ANSWER, SENT_AT)
    later = _task(TaskState.TASK_STATE_INPUT_REQUIRED, history=[], at=SENT_AT + timedelta(milliseconds=1))
    assert stale_status(later, ANSWER, SENT_AT) is None
    assert stale_status(_task(TaskState.TASK_STATE_INPUT_REQUIRED, history=[]), ANSWER, SENT_AT) is None


def test_a_status_without_message_or_timestamp_after_the_answer_is_stale() -> None:
    """a2a-sdk 0.3 over HTTP+JSON: the reply to an answer shows the task still asking, its question moved into the
    history (no status message) and no timestamp (its REST answers carry none). A new question has its message."""
    moved = _sdk_task(TaskState.TASK_STATE_INPUT_REQUIRED, history=["question", "answer"])
    moved.status.ClearField("message")
    reply = task_snapshot(moved)
    assert stale_status(reply, ANSWER, SENT_AT) == reply.status
    moved.ClearField("history")  # no evidence the answer arrived: not told stale
    assert stale_status(task_snapshot(moved), ANSWER, SENT_AT) is None
    asked_again = _task(TaskState.TASK_STATE_INPUT_REQUIRED, history=["ask", "answer"])  # its question, no time
    assert stale_status(asked_again, ANSWER, SENT_AT) is None


def test_only_interrupted_replies_to_a_task_follow_up_can_be_stale() -> None:
    old = SENT_AT - timedelta(minutes=1)
    done = _task(TaskState.TASK_STATE_COMPLETED, history=["ask", "question", "answer"], at=old)
    assert stale_status(done, ANSWER, SENT_AT) is None
    fresh = OutgoingMessage("ask", message_id="answer")  # a new task, no taskId
    asked = _task(TaskState.TASK_STATE_INPUT_REQUIRED, history=["question", "answer"], at=old)
    assert stale_status(asked, fresh, SENT_AT) is None


def test_watch_record_marker_matches_only_that_status() -> None:
    reply = _task(TaskState.TASK_STATE_INPUT_REQUIRED, history=["ask", "question", "answer"], at=SENT_AT)
    record = WatchRecord("w1", "chat1", "bot", "t1", extra={"staleStatus": stale_marker(reply.status)})
    again = WatchRecord.from_json(json.loads(json.dumps(record.to_json())))  # as read back from pending.json
    assert is_stale(again, reply.status)
    new_question = _sdk_task(TaskState.TASK_STATE_INPUT_REQUIRED, history=[], at=SENT_AT)
    new_question.status.message.message_id = "another-question"
    assert not is_stale(again, task_snapshot(new_question).status)
    assert not is_stale(again, _task(TaskState.TASK_STATE_COMPLETED, history=[], at=SENT_AT).status)
    for bad in ("input-required", ["x"], None):  # a hand-edited record: no marker, nothing skipped
        assert not is_stale(WatchRecord("w1", "chat1", "bot", "t1", extra={"staleStatus": bad}), reply.status)


@pytest.mark.parametrize("nanos", [0, 5_000_000, 123_456_000, 123_456_789])
def test_a_status_timestamp_reads_as_the_sdk_writes_it(nanos: int) -> None:
    """Records written before the SDK's types left the core keep `ToJsonString()`'s form: the same text now."""
    status = TaskStatus(state=TaskState.TASK_STATE_INPUT_REQUIRED)
    status.timestamp.seconds, status.timestamp.nanos = 1_772_366_400, nanos
    value = status_value(status)
    assert value.timestamp == status.timestamp.ToJsonString()
    assert value.at == status.timestamp.ToDatetime(tzinfo=UTC)
    assert status_value(TaskStatus()).timestamp == "" and status_value(TaskStatus()).at is None
