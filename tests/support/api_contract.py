"""Holds the API's answers to its own openapi.json: each status documented for the operation, each body valid.

Every API test that goes through `tests.support.api_host.Host` checks its answers here, so a status the
endpoint really answers but the document does not list (or a 200 whose fields the document misdescribes)
fails the test that saw it.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry
from referencing.jsonschema import DRAFT202012

from a2aconsole.api.openapi import openapi_document

DOC_URI = "urn:a2aconsole:openapi"


@functools.cache
def document() -> dict[str, Any]:
    return openapi_document("http://testserver")


@functools.cache
def _registry() -> Registry:
    return Registry().with_resource(DOC_URI, DRAFT202012.create_resource(document()))


def _pointer(*parts: str) -> str:
    return "/".join(p.replace("~", "~0").replace("/", "~1") for p in parts)


def check_answer(path: str, method: str, status: int, content_type: str, body: bytes) -> Any:
    """The decoded answer, after asserting it is JSON, documented for (path, method) and valid for its status."""
    assert content_type.split(";")[0].strip() == "application/json", (status, content_type, body[:200])
    answer = json.loads(body)
    responses = document()["paths"][path][method.lower()]["responses"]
    assert str(status) in responses, f"{method} {path} answered {status}, which openapi.json does not list: {answer}"
    ref = f"{DOC_URI}#/" + _pointer("paths", path, method.lower(), "responses", str(status), "content")
    validator = Draft202012Validator({"$ref": ref + "/application~1json/schema"}, registry=_registry())
    errors = sorted(validator.iter_errors(answer), key=lambda e: e.path)
    assert not errors, f"{method} {path} {status}: {[e.message for e in errors][:3]}; answer: {str(answer)[:300]}"
    return answer


def check_error(status: int, content_type: str, body: bytes) -> dict[str, Any]:
    """An answer with no operation (an unknown /api/ path): JSON of the documented error shape."""
    assert content_type.split(";")[0].strip() == "application/json", (status, content_type, body[:200])
    answer = json.loads(body)
    validator = Draft202012Validator({"$ref": f"{DOC_URI}#/components/schemas/Error"}, registry=_registry())
    assert not list(validator.iter_errors(answer)), answer
    return answer
