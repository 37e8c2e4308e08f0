"""Every console page at once, with a real keyed agent that has answered, asked and is still working:
keys never in any page or WebSocket frame, CSRF on every form and htmx request, a label on every
control, and every htmx form also a plain form (the console works without JavaScript)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

import pytest
from django.test import AsyncClient

from a2aconsole.core import pending
from a2aconsole.core.config import ClientSettings
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.tool.tool import A2ATool
from tests.support.agents import TestAgent
from tests.support.console import connect_socket, create_owner, record_event
from tests.support.csp import assert_strict_csp, inline_code

pytestmark = pytest.mark.django_db(transaction=True)

KEY = "k-NEVER-SHOWN-7f3a"
USERINFO = "pw-NEVER-SHOWN-2b"
QUERY = "q-NEVER-SHOWN-9c"
SECRETS = (KEY, USERINFO, QUERY)
# quick tasks end within the wait even under load: only the held task (its own shorter wait) leaves a record
SETTINGS = ClientSettings(wait_seconds=10, card_timeout_seconds=3, call_timeout=10)


@pytest.fixture
def client_settings() -> ClientSettings:
    return SETTINGS


def _clients(cookie: str) -> tuple[AsyncClient, AsyncClient]:
    """A client, and a client that enforces CSRF like a browser does, both logged in with `cookie`."""
    plain, strict = AsyncClient(), AsyncClient(enforce_csrf_checks=True)
    for client in (plain, strict):
        client.cookies["sessionid"] = cookie
    return plain, strict


FORM = re.compile(r"<form\b([^>]*)>(.*?)</form>", re.S)
CONTROL = re.compile(r"<(input|select|textarea)\b([^>]*)>", re.S)


def _attr(attrs: str, name: str) -> str | None:
    m = re.search(rf'\s{name}="([^"]*)"', attrs)
    return m.group(1) if m else None


def check_page(url: str, html: str) -> None:
    for s in SECRETS:
        assert s not in html, f"{url} shows a secret"
    assert not inline_code(html), f"{url}: {inline_code(html)}"  # the Content-Security-Policy would block it
    for attrs, body in FORM.findall(html):
        if (_attr(attrs, "method") or "get").lower() == "post":
            assert 'name="csrfmiddlewaretoken"' in body, f"{url}: a POST form without a CSRF token"
        if "hx-post" in attrs:
            assert _attr(attrs, "method") == "post" and _attr(attrs, "action"), f"{url}: an htmx-only form"
    if "<body" in html:  # htmx requests carry the token in a header, and swap into what is on the page
        assert re.search(r"hx-headers='\{\"X-CSRFToken\": \"[^\"]+\"\}'", html), url
        for target in re.findall(r'hx-target="#([^"]+)"', html):
            assert f'id="{target}"' in html, f"{url}: an htmx form aims at #{target}, which is not on the page"
    labelled = set(re.findall(r'<label[^>]*\sfor="([^"]+)"', html))
    for tag, attrs in CONTROL.findall(html):
        if _attr(attrs, "type") in ("hidden", "submit"):
            continue
        has_label = _attr(attrs, "id") in labelled or _attr(attrs, "aria-label") or _attr(attrs, "aria-labelledby")
        assert has_label, f"{url}: a {tag} without a label: {attrs.strip()[:80]}"


async def test_every_page_keyless_csrf_labelled_and_plain(
    tool: A2ATool, ws: Workspace, owner_cookie: str, make_agent: Callable[..., TestAgent]
) -> None:
    agent = make_agent(key=KEY, extended=True)
    ws.save_agents(
        [
            {"name": "bot", "url": agent.url, "key": KEY},
            {"name": "gone", "url": f"http://u:{USERINFO}@127.0.0.1:9/a2a?token={QUERY}", "key": KEY},
        ],
        None,
    )
    plain, strict = _clients(owner_cookie)
    pages: dict[str, str] = {}

    async def post(url: str, data: dict[str, str], **kw: object) -> str:
        r = await plain.post(url, data, **kw)
        assert r.status_code < 500, url
        assert_strict_csp(f"POST {url}", r)
        pages[f"POST {url} {data.get('action', '')}"] = r.text
        return r.text

    await post("/chat/console/send/", {"agent": "bot", "message": "hello keys"})
    await post("/chat/console/send/", {"agent": "bot", "message": "ask"})
    asked = agent.received[-1].task_id
    await post("/chat/console/send/", {"agent": "bot", "message": "file"}, headers={"HX-Request": "true"})
    tool.settings = replace(SETTINGS, wait_seconds=0.2)
    await post("/chat/console/send/", {"agent": "bot", "message": "hold k1"})
    await post("/chat/console/send/", {"agent": "gone", "message": "hi"})
    [record] = pending.read(ws).records
    await post("/watches/action/", {"watch": record.watch_id, "action": "status"})
    await post(f"/tasks/bot/{record.task_id}/act/", {"action": "status", "target": "console"})
    stale = ws.read_agents().version
    await post("/agent/bot/edit/", {"name": "bot", "url": agent.url, "version": "0" + stale})
    await post("/agents/file/", {"text": "[", "version": stale})

    for url in [
        "/",
        "/dashboard/agents/",
        "/agents/",
        "/agents/add/",
        "/agents/file/",
        "/agent/bot/",
        "/agent/gone/",
        "/agent/bot/edit/",
        "/agent/gone/edit/",
        "/agent/bot/delete/",
        "/agent/gone/delete/",
        "/chat/console/",
        "/watches/",
        f"/watches/?q=agent:bot {record.task_id[:6]}",
        f"/tasks/bot/{record.task_id}/?target=console",
        f"/tasks/bot/{asked}/",
        "/inbox/console/",
        "/a2a",
        "/audit/",
        "/password/",
    ]:
        r = await strict.get(url)
        assert r.status_code == 200, url
        assert_strict_csp(url, r)
        pages[url] = r.text
    assert "Only for key holders" in pages["/agent/bot/"]  # the key was used, not shown
    assert "Which colour?" in pages["/"] and "report.pdf" in pages["/chat/console/"]
    for url, html in pages.items():
        check_page(url, html)
    # a form posted without its token is refused, htmx or not
    for url in ["/chat/console/send/", "/watches/action/", "/agents/add/", "/agents/file/"]:
        assert (await strict.post(url, {"x": "1"})).status_code == 403, url
        assert (await strict.post(url, {"x": "1"}, headers={"HX-Request": "true"})).status_code == 403, url

    # what the tab's WebSocket sends for each page
    for path in [
        "/ws/console/dashboard/",
        "/ws/console/watches/",
        "/ws/console/chat/?target=console",
        "/ws/console/inbox/?target=console",
        f"/ws/console/task/?agent=bot&task={record.task_id}&target=console",
    ]:
        comm, connected = await connect_socket(path, owner_cookie)
        assert connected, path
        frame = await comm.receive_from(timeout=5)
        assert frame and not any(s in frame for s in SECRETS), path
        assert not inline_code(frame), path
        await comm.disconnect()
    agent.release("k1")


def test_dashboard_names_the_file_to_fix_and_answers_inline(ws: Workspace, client) -> None:
    client.force_login(create_owner())
    pending.file_path(ws).parent.mkdir(parents=True, exist_ok=True)
    pending.file_path(ws).write_text("{broken")
    record_event(None, "q1", "question", "input-required", "Which?")
    html = client.get("/").text
    assert "pending.json" in html and "Fix agents.json" not in html and "Fix pending.json by hand" in html
    assert 'hx-post="/chat/console/send/"' in html and 'action="/chat/console/send/"' in html
    check_page("/", html)
