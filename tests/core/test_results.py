"""Outcomes and result texts: state names, saved files (safe names, never overwritten), skipped parts, texts."""

from __future__ import annotations

import re

import pytest
from a2a.helpers import new_data_part
from a2a.types import Artifact, Message, Part, Role, Task, TaskState, TaskStatus

from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.remote.convert import message_value, state_name, task_snapshot
from a2aconsole.core.remote.values import TaskSnapshot
from a2aconsole.core.results import (
    LISTED,
    MAX_ARTIFACTS,
    MAX_PARTS,
    MAX_TEXT_CHARS,
    PREVIEW_CHARS,
    has_files,
    is_interrupted,
    is_settled,
    is_terminal,
    message_outcome,
    outcome_event,
    result_text,
    safe_file_name,
    task_outcome,
)


def _task(state: int, text: str = "", *artifacts: Artifact) -> TaskSnapshot:
    """A task as the agent's SDK sends it, read as the core reads it (`convert.task_snapshot`)."""
    status = TaskStatus(state=state)
    if text:
        status.message.CopyFrom(Message(role=Role.ROLE_AGENT, parts=[Part(text=text)]))
    return task_snapshot(Task(id="t-1", context_id="c-1", status=status, artifacts=list(artifacts)))


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
    assert message_outcome(message_value(msg), "bot", workspace, 10) == {
        "agent": "bot",
        "message": "hi",
        "contextId": "c-9",
        "files": ["inbox/a2a/bot/a.txt"],
    }


def test_a_question_keeps_its_data_parts(workspace: Workspace) -> None:
    """Before: the status message's data parts were taken and dropped: a question's form never showed."""
    form = {"type": "form", "form": {"type": "object", "properties": {"name": {"type": "string"}}}}
    status = TaskStatus(state=TaskState.TASK_STATE_INPUT_REQUIRED)
    status.message.CopyFrom(Message(role=Role.ROLE_AGENT, parts=[Part(text="Fill this in"), new_data_part(form)]))
    task = task_snapshot(Task(id="t-1", context_id="c-1", status=status))
    out = task_outcome(task, "bot", workspace, 10)
    assert out["question"] == "Fill this in" and out["messageData"] == [{"data": form}]
    assert outcome_event(out)["data"]["dataParts"] == [{"data": form, "in": "message"}]


def test_has_files_only_for_raw_parts() -> None:
    """Only outcomes that save files go to a thread: raw parts, in the status message or an artifact."""
    text = Task(id="t", status=TaskStatus(state=TaskState.TASK_STATE_COMPLETED))
    text.artifacts.append(Artifact(artifact_id="a", parts=[Part(text="hi"), Part(url="https://x.example/f")]))
    assert not has_files(task_snapshot(text))
    in_artifact = Task()
    in_artifact.CopyFrom(text)
    in_artifact.artifacts[0].parts.append(Part(raw=b"%PDF", filename="r.pdf"))
    assert has_files(task_snapshot(in_artifact))
    in_status = Task(id="t", status=TaskStatus(message=Message(parts=[Part(raw=b"x")])))
    assert has_files(task_snapshot(in_status))
    assert has_files(message_value(Message(parts=[Part(raw=b"x")])))
    assert not has_files(message_value(Message(parts=[Part(text="x")])))


def test_a_long_text_is_saved_as_a_file_and_stands_as_its_preview(workspace: Workspace) -> None:
    long = "\n".join(f"line {i}" for i in range(300_000))  # ~2.3 MB
    art = Artifact(name="report", parts=[Part(text=long)])
    out = task_outcome(_task(TaskState.TASK_STATE_COMPLETED, "done", art), "bot", workspace, 10)
    assert out["textFiles"] == [{"name": "report", "file": "inbox/a2a/bot/report.txt", "chars": len(long)}]
    assert (workspace.root / "inbox/a2a/bot/report.txt").read_text() == long  # the whole text, as sent
    more = len(long) - PREVIEW_CHARS
    assert out["artifacts"][0]["text"] == (
        f"{long[:PREVIEW_CHARS]}\n[… {more:,} more characters: the full text is in inbox/a2a/bot/report.txt]"
    )
    assert out["text"] == "done\n\n" + out["artifacts"][0]["text"]
    assert has_files(_task(TaskState.TASK_STATE_COMPLETED, "", art))  # saving it blocks: built in a thread
    event = outcome_event(out)
    assert len(event["text"]) < PREVIEW_CHARS + 100 and event["data"]["textFiles"] == out["textFiles"]
    assert "inbox/a2a/bot/report.txt" in result_text(out)


def test_inline_text_is_bounded_per_outcome(workspace: Workspace) -> None:
    """Many medium texts: inline while the budget lasts, then saved; the outcome's text stays bounded."""
    arts = [Artifact(name=f"part {i}", parts=[Part(text=f"{i}" * 30_000)]) for i in range(10)]
    out = task_outcome(_task(TaskState.TASK_STATE_COMPLETED, "", *arts), "bot", workspace, 10)
    assert [a["text"] for a in out["artifacts"][:2]] == ["0" * 30_000, "1" * 30_000]  # 60,000 of 65,536 inline
    assert len(out["text"]) < MAX_TEXT_CHARS + PREVIEW_CHARS + 10 * 100
    assert [t["name"] for t in out["textFiles"]] == [f"part {i}" for i in range(2, 10)]
    assert (workspace.root / "inbox/a2a/bot/part 9.txt").read_text() == "9" * 30_000


def test_parts_and_artifacts_over_the_count_are_skipped_and_counted(workspace: Workspace) -> None:
    many = Artifact(name="many", parts=[Part(text=f"{i}") for i in range(MAX_PARTS + 5)])
    arts = [many] + [Artifact(name=f"a{i}") for i in range(MAX_ARTIFACTS + 7)]
    out = task_outcome(_task(TaskState.TASK_STATE_COMPLETED, "status", *arts), "bot", workspace, 10)
    assert out["partsSkipped"] == 6 and out["maxParts"] == MAX_PARTS  # the status message's part counts too
    assert out["artifactsSkipped"] == 8 and len(out["artifacts"]) == MAX_ARTIFACTS
    assert out["artifacts"][0]["text"].endswith(f"\n{MAX_PARTS - 2}")
    assert "Skipped: 8 artifacts over the first 200 and 6 parts over the first 2000" in result_text(out)
    assert outcome_event(out)["data"]["partsSkipped"] == 6


@pytest.mark.parametrize("url", ["javascript:alert(document.cookie)", " JavaScript:alert(1)", "data:text/html,<b>x"])
def test_only_http_urls_become_links(workspace: Workspace, url: str) -> None:
    art = Artifact(
        name="links", parts=[Part(url=url), Part(url="https://ok.example/a"), Part(url="http:/" + "x" * 5000)]
    )
    out = task_outcome(_task(TaskState.TASK_STATE_COMPLETED, "see", art), "bot", workspace, 10)
    assert out["links"] == ["https://ok.example/a"]
    assert out["otherUrls"] == [url, "http:/" + "x" * 194]  # kept as text (a long one cut)
    assert out["artifacts"][0]["parts"][0] == {"url": url, "note": "not an http(s) link: kept as text"}
    assert f"Not links (kept as text): {url}" in result_text(out)


def test_many_files_of_one_name_get_distinct_names_in_constant_time(workspace: Workspace) -> None:
    """1,200 parts named alike: each save tries one name (no walk over name-1 … name-n), all are kept, and
    asking again reuses them; parts alike in name and content are one file."""
    parts = [Part(raw=f"file {i}\n".encode(), filename="part.txt") for i in range(1200)]
    art = Artifact(name="files", parts=[*parts, Part(raw=b"file 0\n", filename="part.txt")])
    folder = workspace.inbox_dir / "bot"
    out = task_outcome(_task(TaskState.TASK_STATE_COMPLETED, "", art), "bot", workspace, 100)
    assert out["files"] == ["inbox/a2a/bot/part.txt"] + [f"inbox/a2a/bot/part-{i}.txt" for i in range(1, 1200)]
    assert (workspace.root / out["files"][1199]).read_text() == "file 1199\n"
    again = task_outcome(_task(TaskState.TASK_STATE_COMPLETED, "", art), "bot", workspace, 100)
    assert again["files"] == out["files"] and len(list(folder.iterdir())) == 1200
    files_line = next(line for line in result_text(out).splitlines() if line.startswith("Files: "))
    assert files_line.startswith("Files: inbox/a2a/bot/part.txt, inbox/a2a/bot/part-1.txt, ")
    assert len(files_line) < 2200 and files_line.endswith(" more)")  # the chat's text names the first ones


def test_names_taken_by_other_files_are_passed_by_content(workspace: Workspace) -> None:
    """When the names are taken by other content, a few tries, then names by content: found again later."""
    folder = workspace.inbox_dir / "bot"
    folder.mkdir(parents=True)
    for i, name in enumerate(["part.txt", "part-1.txt", "part-2.txt", "part-3.txt"]):
        (folder / name).write_text(f"someone else's {i}")
    art = Artifact(name="files", parts=[Part(raw=f"file {i}\n".encode(), filename="part.txt") for i in range(300)])
    out = task_outcome(_task(TaskState.TASK_STATE_COMPLETED, "", art), "bot", workspace, 100)
    assert len(out["files"]) == len(set(out["files"])) == 300
    assert all(re.fullmatch(r"inbox/a2a/bot/part-[0-9a-f]{12}\.txt", f) for f in out["files"])
    assert (folder / "part.txt").read_text() == "someone else's 0"
    assert (workspace.root / out["files"][299]).read_text() == "file 299\n"
    again = task_outcome(_task(TaskState.TASK_STATE_COMPLETED, "", art), "bot", workspace, 100)
    assert again["files"] == out["files"] and len(list(folder.iterdir())) == 304


def test_events_keep_previews_of_long_lists(workspace: Workspace) -> None:
    out = {"state": "completed", "text": "x" * 10_000, "files": [f"inbox/a2a/bot/f{i}" for i in range(300)]}
    out["links"] = [f"https://x.example/{'y' * 500}/{i}" for i in range(10)]
    data = outcome_event(out)["data"]
    assert len(data["files"]) == LISTED and data["filesMore"] == 250
    assert 1 <= len(data["links"]) < 10 and data["linksMore"] == 10 - len(data["links"])
    assert outcome_event(out)["text"] == "x" * PREVIEW_CHARS + f"\n[… {10_000 - PREVIEW_CHARS:,} more characters]"


def _file_task() -> TaskSnapshot:
    files = Artifact(
        name="code", parts=[Part(raw=b"alert(1)", filename="code.js"), new_data_part({"k": "v" * MAX_TEXT_CHARS})]
    )
    return _task(TaskState.TASK_STATE_COMPLETED, "x" * (MAX_TEXT_CHARS + 10), files)


@pytest.mark.parametrize("linked", ["inbox/a2a/evil", "inbox/a2a", "inbox"])
def test_an_inbox_folder_linked_outside_the_workspace_takes_no_files(
    workspace: Workspace, tmp_path_factory: pytest.TempPathFactory, linked: str
) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    link = workspace.root / linked
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(elsewhere, target_is_directory=True)
    out = task_outcome(_file_task(), "evil", workspace, 10_000)
    assert list(elsewhere.rglob("*")) == []  # nothing written there, not even a folder
    reason = "the folder inbox/a2a/evil leads outside the workspace (a symlink)"
    assert out["files"] == [] and "textFiles" not in out
    assert out["skipped"] == [
        {"name": "message.txt", "bytes": MAX_TEXT_CHARS + 10, "reason": reason},
        {"name": "code.js", "bytes": 8, "reason": reason},
        {"name": "code.json", "bytes": len('{"k": ""}') + MAX_TEXT_CHARS, "reason": reason},
    ]
    assert out["text"].endswith(f"[… {MAX_TEXT_CHARS + 10 - PREVIEW_CHARS:,} more characters, not saved: {reason}]")
    assert f"Files not saved ({reason}): message.txt, code.js, code.json" in result_text(out)
    assert "Files skipped" not in result_text(out)


def test_an_inbox_folder_linked_into_the_console_state_takes_no_files(workspace: Workspace) -> None:
    state = workspace.root / ".volcanic" / "a2a"
    state.mkdir(parents=True, exist_ok=True)
    workspace.inbox_dir.mkdir(parents=True)
    (workspace.inbox_dir / "evil").symlink_to(state, target_is_directory=True)
    out = task_outcome(_file_task(), "evil", workspace, 10_000)
    assert out["files"] == [] and {s["name"] for s in out["skipped"]} == {"message.txt", "code.js", "code.json"}
    assert not (state / "code.js").exists()


def test_an_inbox_folder_linked_elsewhere_inside_the_workspace_is_used(workspace: Workspace) -> None:
    (workspace.root / "shared").mkdir()
    workspace.inbox_dir.mkdir(parents=True)
    (workspace.inbox_dir / "bot").symlink_to(workspace.root / "shared", target_is_directory=True)
    art = Artifact(name="r", parts=[Part(raw=b"pdf", filename="r.pdf")])
    out = task_outcome(_task(TaskState.TASK_STATE_COMPLETED, "done", art), "bot", workspace, 100)
    assert out["files"] == ["shared/r.pdf"] and out["skipped"] == []  # named where it really is
    assert (workspace.root / "shared" / "r.pdf").read_bytes() == b"pdf"
