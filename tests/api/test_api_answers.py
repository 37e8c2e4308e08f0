"""Every answer under /api/ is JSON, whatever went wrong, and openapi.json lists and describes each one."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import AsyncClient, Client

from a2aconsole.api.openapi import TOOL_PATH
from a2aconsole.core.files.workspace import Workspace
from tests.support.agents import TestAgent
from tests.support.api_contract import check_answer, check_error, document
from tests.support.api_host import Host
from tests.support.console import owner_session

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_wrong_method_is_a_json_405_with_allow(host: Host) -> None:
    """Before: GET on the tool was a 405 with an empty HTML body."""
    client = AsyncClient(enforce_csrf_checks=True)
    auth = {"Authorization": f"Bearer {host.token}"}
    for method in ("get", "put", "patch", "delete"):
        resp = await getattr(client, method)("/api/v1/targets/bot/tool", headers=auth)
        check_answer(TOOL_PATH, "POST", resp.status_code, resp["Content-Type"], resp.content)
        assert resp.status_code == 405 and resp["Allow"] == "POST", method
        assert "use POST" in json.loads(resp.content)["error"]
    for path in ("/api/v1/tool-schema", "/api/v1/openapi.json"):
        for method in ("post", "put", "delete"):
            resp = await getattr(client, method)(path, b"{}", content_type="application/json")
            check_answer(path, "GET", resp.status_code, resp["Content-Type"], resp.content)
            assert resp.status_code == 405 and resp["Allow"] == "GET", (path, method)


@pytest.mark.parametrize(
    "path",
    ["/api", "/api/", "/api/v2/tool", "/api/v1/", "/api/v1/targets/bot/tools", "/api/v1/tool-schema/", "/api/%00x"],
)
def test_a_mistyped_api_path_is_a_json_404_not_a_page_or_a_login_redirect(path: str) -> None:
    """Before: an HTML 404 page (or the login page's redirect)."""
    client = Client(enforce_csrf_checks=True)
    for resp in (client.get(path), client.post(path, b"{}", content_type="application/json")):
        assert resp.status_code == 404, (path, resp.status_code)
        assert "openapi.json" in check_error(404, resp["Content-Type"], resp.content)["error"]


def test_a_session_without_a_csrf_token_still_gets_json(client: Client) -> None:
    """A logged-in browser posting to /api/ paths meets no CSRF page: the API takes tokens, not sessions."""
    client = Client(enforce_csrf_checks=True)
    client.cookies["sessionid"] = owner_session()
    for path, status in (("/api/v1/tool-schema", 405), ("/api/v1/nothing", 404), ("/api/v1/targets/x/tool", 401)):
        resp = client.post(path, b'{"action": "agents"}', content_type="application/json")
        assert resp.status_code == status, path
        check_error(status, resp["Content-Type"], resp.content)


def test_a_refused_host_header_is_a_json_400_under_api() -> None:
    resp = Client().get("/api/v1/openapi.json", headers={"host": "evil.example"})
    assert resp.status_code == 400
    check_error(400, resp["Content-Type"], resp.content)
    page = Client().get("/login/", headers={"host": "evil.example"})
    assert page.status_code == 400 and not page["Content-Type"].startswith("application/json")  # pages stay pages


async def test_a_crash_is_a_json_500_under_api(
    host: Host, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken() -> Any:
        raise RuntimeError("the runtime could not be built")

    monkeypatch.setattr("a2aconsole.api.views.get_runtime", broken)
    client = AsyncClient(raise_request_exception=False)
    resp = await client.post(
        "/api/v1/targets/bot/tool",
        b'{"action": "agents"}',
        content_type="application/json",
        headers={"Authorization": f"Bearer {host.token}"},
    )
    answer = check_answer(TOOL_PATH, "POST", resp.status_code, resp["Content-Type"], resp.content)
    assert resp.status_code == 500 and "server log" in answer["error"]
    assert "RuntimeError" not in answer["error"] and "Traceback" not in resp.content.decode()


async def test_a_body_that_is_not_json_by_its_type_is_a_415(host: Host, echo: TestAgent) -> None:
    body = {"action": "agents"}
    for content_type in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"):
        status, answer = await host.call(body, content_type=content_type)
        assert status == 415 and "application/json" in answer["error"], content_type
    assert echo.requests == []
    for content_type in ("application/json; charset=utf-8", "APPLICATION/JSON", "application/vnd.api+json"):
        assert (await host.call(body, content_type=content_type))[0] == 200, content_type


async def test_a_raw_body_without_a_content_type_is_taken_as_json(host: Host, echo: TestAgent) -> None:
    resp = await host.client.generic(
        "POST", "/api/v1/targets/bot/tool", b'{"action": "agents"}', headers={"Authorization": f"Bearer {host.token}"}
    )
    answer = check_answer(TOOL_PATH, "POST", resp.status_code, resp["Content-Type"], resp.content)
    assert resp.status_code == 200 and answer["agents"][0]["name"] == "echo"


async def test_each_kind_of_result_validates_against_the_documented_200(
    host: Host, echo: TestAgent, workspace: Workspace
) -> None:
    """`Host.call` validates every answer; here every kind of result is produced once."""
    _, listed = await host.call({"action": "agents"})
    assert listed["agents"][0]["skills"]
    _, done = await host.call({"action": "send", "agent": "echo", "message": "file"})
    assert done["files"] and done["links"] and done["artifacts"][0]["parts"]
    _, asked = await host.call({"action": "send", "agent": "echo", "message": "ask"})
    assert asked["question"] and asked["hint"]
    _, status = await host.call({"action": "status", "agent": "echo", "taskId": asked["taskId"]})
    assert status["state"] == "input-required"
    _, canceled = await host.call({"action": "cancel", "agent": "echo", "taskId": asked["taskId"]})
    assert canceled["state"] == "canceled"
    _, message = await host.call({"action": "send", "agent": "echo", "message": "message only"})
    assert message["message"] == "echo: message only"
    _, failed = await host.call({"action": "send", "agent": "nobody", "message": "hi"})
    assert failed["error"]


def test_openapi_describes_the_results_not_just_an_object() -> None:
    doc = document()
    ok = doc["paths"][TOOL_PATH]["post"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert ok != {"type": "object"} and len(ok["anyOf"]) >= 4
    task = doc["components"]["schemas"]["TaskResult"]["properties"]
    for member in ("state", "taskId", "contextId", "text", "artifacts", "files", "links", "skipped", "question"):
        assert member in task, member
    assert {"hint", "note"} <= set(task)
    responses = doc["paths"][TOOL_PATH]["post"]["responses"]
    assert {"200", "400", "401", "403", "405", "413", "415", "500", "503"} <= set(responses)
    assert "Allow" in responses["405"]["headers"]


def test_djangos_error_handlers_answer_json_for_api_paths_and_pages_elsewhere(rf: Any) -> None:
    """The handlers a2aconsole/urls.py installs (400, 403, 404, 500), for a view that raises under /api/."""
    from a2aconsole import urls

    for handler, status in ((urls.handler400, 400), (urls.handler403, 403), (urls.handler404, 404)):
        resp = handler(rf.get("/api/v1/anything"), Exception("no details shown"))
        assert resp.status_code == status
        assert "no details" not in check_error(status, resp["Content-Type"], resp.content)["error"]
        page = handler(rf.get("/agents/"), Exception("x"))
        assert page.status_code == status and page["Content-Type"].startswith("text/html")
    resp = urls.handler500(rf.get("/api/v1/anything"))
    assert resp.status_code == 500 and check_error(500, resp["Content-Type"], resp.content)
    assert urls.handler500(rf.get("/")).status_code == 500
