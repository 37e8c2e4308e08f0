"""The bytes of a file over protocol 0.3 HTTP+JSON, as each SDK writes them (`lenient.raw_file_bytes`): the 0.3
proto's `fileWithBytes` is a bytes field, which `@a2a-js/sdk` 0.3 fills with the file and a2a-sdk 0.3 with its
base64 text. a2a-sdk's own 0.3 writing and reading (`proto_utils`, `conversions`) stand for a2a-sdk 0.3 agents and
for the console's reading; the JS agents' answers are read over the wire in tests/core/tool/test_js03_agent.py."""

from __future__ import annotations

import base64
from typing import Any

from a2a.compat.v0_3 import a2a_v0_3_pb2, conversions, proto_utils
from a2a.compat.v0_3 import types as types_v03
from google.protobuf.json_format import MessageToDict, ParseDict

from a2aconsole.core.remote.lenient import raw_file_bytes

PDF = b"%PDF-1.4\n% report\n" + bytes(range(256))


def _as_a2a_sdk_writes(content: bytes) -> dict[str, Any]:
    """A 0.3 task with a file artifact, in the JSON a2a-sdk 0.3's HTTP+JSON server writes."""
    file = types_v03.FileWithBytes(bytes=base64.b64encode(content).decode(), mime_type="application/pdf")
    task = types_v03.Task(
        id="t1",
        context_id="c1",
        status=types_v03.TaskStatus(state=types_v03.TaskState.completed),
        artifacts=[types_v03.Artifact(artifact_id="a1", parts=[types_v03.Part(root=types_v03.FilePart(file=file))])],
    )
    return MessageToDict(proto_utils.ToProto.task(task))


def _as_js_writes(content: bytes) -> dict[str, Any]:
    """The same task as `@a2a-js/sdk` 0.3 writes it: the file itself in the bytes field."""
    answer = _as_a2a_sdk_writes(content)
    answer["artifacts"][0]["parts"][0]["file"]["fileWithBytes"] = base64.b64encode(content).decode()
    return answer


def _read(answer: dict[str, Any]) -> bytes:
    """The file as the SDK's 0.3 HTTP+JSON reading makes it of the answer."""
    task = conversions.to_core_task(proto_utils.FromProto.task(ParseDict(answer, a2a_v0_3_pb2.Task())))
    return task.artifacts[0].parts[0].raw


def test_a_js_file_is_read_as_sent() -> None:
    assert _read(raw_file_bytes(_as_js_writes(PDF))) == PDF


def test_an_a2a_sdk_file_is_left_as_it_is() -> None:
    python = _as_a2a_sdk_writes(PDF)
    assert raw_file_bytes(python) == python and _read(python) == PDF


def test_values_that_are_no_file_bytes_are_left_alone() -> None:
    """Not base64 at all (the SDK's reading then says so), empty, or inside metadata (the application's)."""
    for said in ("not base64!", ""):
        answer = _as_js_writes(PDF)
        answer["artifacts"][0]["parts"][0]["file"]["fileWithBytes"] = said
        assert raw_file_bytes(answer) == answer
    meta = {"metadata": {"fileWithBytes": base64.b64encode(PDF).decode()}}
    assert raw_file_bytes(meta) == meta


def test_a_js_file_that_is_base64_text_reads_as_a2a_sdk_writes_it() -> None:
    """The one case the two cannot be told apart: a JS agent's file that is itself base64 text (`bbbb`) is
    decoded once more."""
    assert _read(raw_file_bytes(_as_js_writes(b"bbbb"))) == base64.b64decode(b"bbbb")
