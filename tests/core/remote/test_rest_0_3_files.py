"""The bytes of a file over protocol 0.3 HTTP+JSON, as each SDK writes them (`lenient.raw_file_bytes`): the 0.3
proto's `fileWithBytes` is a bytes field, which `@a2a-js/sdk` 0.3 fills with the file and a2a-sdk 0.3 with its
base64 text; the SDK's 0.3 reading decodes twice. Read over the wire against a real agent in
tests/core/tool/test_js03_agent.py; here, the rule on the values each SDK writes."""

from __future__ import annotations

import base64

from a2aconsole.core.remote.lenient import raw_file_bytes


def _answer(file_bytes: str) -> dict[str, object]:
    part = {"file": {"fileWithBytes": file_bytes, "mimeType": "application/pdf"}}
    return {"task": {"id": "t1", "artifacts": [{"artifactId": "a1", "parts": [part]}], "metadata": {"k": "v"}}}


def _read_as_the_sdk_does(answer: dict[str, object]) -> bytes:
    """What a2a-sdk 0.3's reading makes of the value: the proto's bytes as text, decoded as base64."""
    said = answer["task"]["artifacts"][0]["parts"][0]["file"]["fileWithBytes"]  # type: ignore[index]
    return base64.b64decode(base64.b64decode(said).decode("utf-8"))


def test_a_js_file_is_wrapped_as_a2a_sdk_writes_it() -> None:
    pdf = b"%PDF-1.4\n% report\n" + bytes(range(256))
    js = _answer(base64.b64encode(pdf).decode())
    assert _read_as_the_sdk_does(raw_file_bytes(js)) == pdf


def test_an_a2a_sdk_file_is_left_as_it_is() -> None:
    pdf = b"%PDF-1.4\n% report\n" + bytes(range(256))
    python = _answer(base64.b64encode(base64.b64encode(pdf)).decode())
    assert raw_file_bytes(python) == python
    assert _read_as_the_sdk_does(python) == pdf


def test_values_that_are_no_file_bytes_are_left_alone() -> None:
    """Not base64 at all (the SDK's reading then says so), empty, or inside metadata (the application's)."""
    for said in ("not base64!", ""):
        assert raw_file_bytes(_answer(said)) == _answer(said)
    meta = {"metadata": {"fileWithBytes": base64.b64encode(b"%PDF").decode()}}
    assert raw_file_bytes(meta) == meta


def test_a_file_that_is_base64_text_reads_as_a2a_sdk_writes_it() -> None:
    """The one case the two cannot be told apart: a JS agent's file that is itself base64 text is decoded once
    more (documented in docs/compat.md)."""
    text = base64.b64encode(b"inner")
    js = _answer(base64.b64encode(text).decode())
    assert raw_file_bytes(js) == js and _read_as_the_sdk_does(js) == b"inner"
