"""The API against its own openapi.json, by a maintained fuzzer: schemathesis generates requests from the document the
console serves (valid and invalid bodies, headers, methods) and sends them to the whole ASGI application (as daphne
serves it, `api/handler.py` included), with every check on: no 5xx, each status and content type documented, each
body and header valid for its status, invalid data refused, auth enforced.

The target is the real one with a real token, so calls reach the tool; its agents.json names an agent with nobody
listening, so a generated send is refused by the network (a readable ToolError, still a 200) and nothing leaves.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.python import asgi as schemathesis_asgi

from a2aconsole.api.openapi import openapi_document
from a2aconsole.asgi import application
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.web.models import ApiToken, ChatTarget
from a2aconsole.web.process.runtime import close_runtime
from tests.support.asgi import asgi_client

pytestmark = pytest.mark.django_db(transaction=True)

TARGET = "bot"
# Every check on. A valid body may still be refused with the documented 422 when an earlier case used its generated
# Idempotency-Key (a handful of short strings) with another body: the answer is to that state, not to this request.
ACCEPTED = ["2xx", "3xx", "401", "403", "404", "409", "422", "429", "5xx"]  # schemathesis's default, plus 422
# An invalid body over the upload limit is refused before it is read, with the documented 413 rather than a 400.
REFUSED = ["400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428", "429", "5xx"]  # default + 413
CONFIG = schemathesis.Config.from_dict(
    {
        "seed": 28,
        "parameters": {"targetId": TARGET},
        "checks": {
            "enabled": True,
            "positive_data_acceptance": {"expected-statuses": ACCEPTED},
            "negative_data_rejection": {"expected-statuses": REFUSED},
        },
    }
)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# The document as `/api/v1/openapi.json` serves it (test_the_fuzzed_document_is_the_served_one), sent to the
# ASGI app as `from_asgi` would. Not `from_asgi` itself nor `pytest.from_fixture`: the first would call the app at
# collection, the second runs its cases as subtests, which set `item._nodeid` (gone in pytest 9).
schema = schemathesis.openapi.from_dict(openapi_document("http://testserver"), config=CONFIG)
schema.app = application


@pytest.fixture
def token(workspace: Workspace) -> Iterator[str]:
    """The live token of target `bot`, whose one agent is a real address with nobody listening."""
    workspace.save_agents([{"name": "echo", "url": f"http://127.0.0.1:{_closed_port()}/"}], None)
    target = ChatTarget.objects.create(id=TARGET, name=TARGET, workspace=str(workspace.root))
    _, secret = ApiToken.issue(target, "schemathesis")
    yield secret
    # schemathesis serves the app on one event loop of its own; the runtime the API built there is closed here
    schemathesis_asgi._get_portal().call(close_runtime)


@schema.parametrize()
@settings(
    max_examples=300,
    deadline=None,
    database=None,  # no .hypothesis example folder in the repo
    derandomize=True,  # the same cases on every run
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_the_api_answers_as_its_openapi_json_says(case: schemathesis.Case, token: str) -> None:
    case.call_and_validate(headers={"Authorization": f"Bearer {token}"})


async def test_the_fuzzed_document_is_the_served_one() -> None:
    async with asgi_client() as client:
        resp = await client.get("/api/v1/openapi.json")
    assert resp.status_code == 200 and resp.json() == schema.raw_schema
