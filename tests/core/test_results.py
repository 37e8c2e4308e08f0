"""Outcomes and result texts: state names, saved files (safe names, never overwritten), skipped parts, texts."""

from __future__ import annotations

import pytest
from a2a.types import Artifact, Message, Part, Role, Task, TaskState, TaskStatus

from a2aconsole.core.results import (
    has_files,
    is_interrupted,
    is_settled,
    is_terminal,
    message_outcome,
    result_text,
    safe_file_name,
    state_name,
    task_outcome,
)
from a2aconsole.core.workspace import Workspace


def _task(state: int, text: str = "", *artifacts: Artifact) -> Task:
    status = TaskStatus(state=state)
    if text:
        status.message.CopyFrom(Message(role=Role.ROLE_AGENT, parts=[Part(text=text)]))
    return Task(id="t-1", context_id="c-1", status=status, artifacts=list(artifacts))


def test_state_names_are_the_spec_kebab_forms() -> None:
    assert state_name(TaskState.TASK_STATE_INPUT_REQUIRED) == "input-required"
    assert state_name(TaskState.TASK_STATE_AUTH_REQUIRED) == "auth-required"
    assert state_name(TaskState.TASK_STATE_UNSPECIFIED) == "unknown"
    assert [is_terminal(s) for s in ("completed", "failed", "canceled", "rejected", "working")] == [True] * 4 + [False]
    assert is_interrupted("input-required") and is_interrupted("auth-required") and not is_interrupted("completed")
    assert is_settled("auth-required") and not is_settled("submitted")


@pytest.mark.parametrize(
    ("name", "media_type", "expected"),
    [
        ("report.pdf", "", "report.pdf"),
        ("../../etc/passwd", "", "passwd"),
        ("..\\..\\win.ini", "", "win.ini"),
        (".bashrc", "", "bashrc"),
        ("...", "", "file"),
        ("", "application/pdf", "file.pdf"),
        ("my report (final).pdf", "", "my report _final_.pdf"),
        ("x" * 300 + ".txt", "", "x" * 116 + ".txt"),
    ],
)
def test_safe_file_name(name: str, media_type: str, expected: str) -> None:
    assert safe_file_name(name, media_type) == expected


def test_file_parts_saved_never_overwriting(workspace: Workspace) -> None:
    art = Artifact(name="report", parts=[Part(raw=b"new", filename="../.r.pdf", media_type="application/pdf")])
    folder = workspace.inbox_dir / "bot"
    folder.mkdir(parents=True)
    (folder / "r.pdf").write_bytes(b"old")
    out = task_outcome(_task(TaskState.TASK_STATE_COMPLETED, "done", art), "bot", workspace, 100)
    assert out["files"] == ["inbox/a2a/bot/r-1.pdf"]
    assert (folder / "r.pdf").read_bytes() == b"old" and (folder / "r-1.pdf").read_bytes() == b"new"
    again = task_outcome(_task(TaskState.TASK_STATE_COMPLETED, "done", art), "bot", workspace, 100)
    assert again["files"] == ["inbox/a2a/bot/r-1.pdf"]  # the same content is not saved twice
    assert sorted(p.name for p in folder.iterdir()) == ["r-1.pdf", "r.pdf"]  # no temp files left


def test_outcome_text_links_skipped_and_result_text(workspace: Workspace) -> None:
    arts = (
        Artifact(name="summary", parts=[Part(text="the summary")]),
        Artifact(name="files", parts=[Part(url="https://x.example/a.pdf"), Part(raw=b"z" * 50, filename="big.bin")]),
    )
    out = task_outcome(_task(TaskState.TASK_STATE_COMPLETED, "all done", *arts), "travel-bot", workspace, 10)
    assert out["text"] == "all done\n\nthe summary"
    assert out["links"] == ["https://x.example/a.pdf"]
    assert out["skipped"] == [{"name": "big.bin", "bytes": 50}] and out["files"] == []
    assert result_text(out) == (
        '[A2A result from "travel-bot", task t-1 (completed)]\n'
        "all done\n\nthe summary\n"
        "Links: https://x.example/a.pdf\n"
        "Files skipped (over 10 bytes): big.bin (50 bytes)\n"
        "Context: c-1"
    )


def test_question_outcome_and_text(workspace: Workspace) -> None:
    out = task_outcome(_task(TaskState.TASK_STATE_INPUT_REQUIRED, "Which colour?"), "travel-bot", workspace, 10)
    assert out["question"] == "Which colour?"
    assert 'taskId="t-1"' in out["hint"] and "action=send" in out["hint"]
    text = result_text(out)
    assert text.startswith('[A2A question from "travel-bot", task t-1 (input-required)]\nWhich colour?\n')
    assert "Context: c-1" in text and text.endswith(out["hint"])


def test_text_falls_back_to_artifacts(workspace: Workspace) -> None:
    art = Artifact(name="a", parts=[Part(text="only here")])
    out = task_outcome(_task(TaskState.TASK_STATE_COMPLETED, "", art), "bot", workspace, 10)
    assert out["text"] == "only here"
    assert "\nFiles:" not in result_text(out)


def test_message_outcome(workspace: Workspace) -> None:
    msg = Message(role=Role.ROLE_AGENT, context_id="c-9", parts=[Part(text="hi"), Part(raw=b"a", filename="a.txt")])
    assert message_outcome(msg, "bot", workspace, 10) == {
        "agent": "bot",
        "message": "hi",
        "contextId": "c-9",
        "files": ["inbox/a2a/bot/a.txt"],
    }


def test_has_files_only_for_raw_parts() -> None:
    """Only outcomes that save files go to a thread: raw parts, in the status message or an artifact."""
    text = Task(id="t", status=TaskStatus(state=TaskState.TASK_STATE_COMPLETED))
    text.artifacts.append(Artifact(artifact_id="a", parts=[Part(text="hi"), Part(url="https://x.example/f")]))
    assert not has_files(text)
    in_artifact = Task()
    in_artifact.CopyFrom(text)
    in_artifact.artifacts[0].parts.append(Part(raw=b"%PDF", filename="r.pdf"))
    assert has_files(in_artifact)
    in_status = Task(id="t", status=TaskStatus(message=Message(parts=[Part(raw=b"x")])))
    assert has_files(in_status)
    assert has_files(Message(parts=[Part(raw=b"x")])) and not has_files(Message(parts=[Part(text="x")]))
