"""Remote agents that misbehave, served for real on loopback: each failure is one readable error, nothing is written.

A card that is not JSON, not a card, too big or behind a redirect; an interface URL pointing at another
server; JSON-RPC answers that are garbage. The agent's URL carries a key in its user info and query, and
its key header a third secret: none of them may show in a result, an error or a DEBUG log line.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
import uvicorn
from google.protobuf.json_format import MessageToDict
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from a2aconsole.core import pending
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.remote.client import MAX_CARD_BYTES
from tests.support.agents import TestAgent
from tests.support.toolkit import TARGET, entry, make_tool, write_agents

KEY = "KEYHDR-misbehave-7q"
URL_USER, URL_PASS, URL_QUERY = "USERINFO-u9", "USERPASS-p8", "QUERYKEY-k7"
SECRETS = (KEY, URL_PASS, URL_QUERY)

Handler = Callable[[Request], Any]


class Misbehaving:
    """A loopback HTTP server whose routes a test scripts: `routes[path] = handler`; every request is recorded."""

    def __init__(self) -> None:
        self.routes: dict[str, Handler] = {}
        self.hits: list[tuple[str, str, dict[str, str]]] = []
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self._sock, self.port = sock, sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = uvicorn.Server(uvicorn.Config(self._app(), log_level="warning", lifespan="off"))
        self.thread = threading.Thread(target=lambda: asyncio.run(self.server.serve(sockets=[sock])), daemon=True)

    def _app(self) -> Starlette:
        async def handle(request: Request) -> Response:
            await request.body()
            self.hits.append((request.method, request.url.path, {k.lower(): v for k, v in request.headers.items()}))
            handler = self.routes.get(request.url.path)
            if handler is None:
                return JSONResponse({"error": "no route"}, status_code=404)
            return handler(request)

        return Starlette(routes=[Route("/{path:path}", handle, methods=["GET", "POST"])])

    def start(self) -> Misbehaving:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            assert time.monotonic() < deadline, "server did not start"
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self._sock.close()


@pytest.fixture
def far() -> Iterator[Misbehaving]:
    s = Misbehaving().start()
    yield s
    s.stop()


@pytest.fixture
def other() -> Iterator[Misbehaving]:
    s = Misbehaving().start()
    yield s
    s.stop()


def card_json(interface_url: str, **changes: Any) -> dict[str, Any]:
    agent = TestAgent()  # only for its card: never started
    agent._sock.close()
    card = MessageToDict(agent.card)
    card["supportedInterfaces"][0]["url"] = interface_url
    card["securitySchemes"] = {"apikey": {"apiKeySecurityScheme": {"location": "header", "name": "X-API-Key"}}}
    card.update(changes)
    return card


def keyed_url(server: Misbehaving) -> str:
    return f"http://{URL_USER}:{URL_PASS}@127.0.0.1:{server.port}/?key={URL_QUERY}"


def assert_clean(*texts: str) -> None:
    for text in texts:
        for secret in SECRETS:
            assert secret not in text, f"{secret} leaked in: {text[:300]}"
        assert "Traceback" not in text


async def test_bad_cards_each_get_one_readable_error(
    far: Misbehaving, other: Misbehaving, http: httpx.AsyncClient, workspace: Workspace, caplog: Any
) -> None:
    caplog.set_level(logging.DEBUG)
    write_agents(workspace, entry("far", keyed_url(far), key=KEY))
    tool = make_tool(http, workspace)
    card_path = "/.well-known/agent-card.json"
    cases: list[tuple[Handler, str]] = [
        (lambda r: Response("<html>not a card</html>", media_type="text/html"), "its card is not JSON"),
        (lambda r: JSONResponse([1, 2, 3]), "not a valid agent card"),
        (lambda r: JSONResponse({"supportedInterfaces": "nope"}), "not a valid agent card"),
        (lambda r: Response("[" * 200_000, media_type="application/json"), "its card is not JSON"),
        (lambda r: JSONResponse(card_json(far.url, description="d" * (MAX_CARD_BYTES + 10))), "over 1024 KB"),
        (lambda r: RedirectResponse(f"{other.url}/card?key={URL_QUERY}", status_code=302), "redirects (HTTP 302)"),
        (lambda r: Response("down", status_code=503), "HTTP 503"),
        (lambda r: Response("who?", status_code=401), "check its key"),
    ]
    for handler, expected in cases:
        far.routes[card_path] = handler
        for action, args in (("agents", {}), ("send", {"agent": "far", "message": "hi"})):
            result = await tool.run(action, args, TARGET)
            text = json.dumps(result)
            assert expected in text, (expected, text[:300])
            assert len(text) < 2000  # a huge card never floods the caller
            assert_clean(text)
    assert other.hits == []  # the redirect was not followed
    assert not pending.file_path(workspace).exists()
    assert_clean(*(r.getMessage() for r in caplog.records))


async def test_interface_elsewhere_and_garbage_rpc_answers(
    far: Misbehaving, other: Misbehaving, http: httpx.AsyncClient, workspace: Workspace, caplog: Any
) -> None:
    caplog.set_level(logging.DEBUG)
    write_agents(workspace, entry("far", keyed_url(far), key=KEY, trustedOrigins=[other.url]))  # confirmed
    tool = make_tool(http, workspace)
    far.routes["/.well-known/agent-card.json"] = lambda r: JSONResponse(card_json(f"{other.url}/rpc"))
    answers: list[tuple[Handler, str]] = [
        (lambda r: Response("garbage", media_type="text/plain"), 'agent "far"'),
        (lambda r: JSONResponse({"jsonrpc": "2.0", "id": 1, "result": "a string"}), 'agent "far"'),
        (lambda r: JSONResponse([]), 'agent "far"'),
        (lambda r: JSONResponse({"jsonrpc": "2.0", "id": 1, "error": {"code": "x", "message": 5}}), 'agent "far"'),
        (lambda r: Response("<h1>oops</h1>", status_code=500, media_type="text/html"), 'agent "far"'),
        (lambda r: Response(b"\xff\xfe\x00", media_type="application/json"), 'agent "far"'),
    ]
    for handler, expected in answers:
        other.routes["/rpc"] = handler
        for action, args in (
            ("send", {"agent": "far", "message": "hi"}),
            ("status", {"agent": "far", "taskId": "t-1"}),
            ("cancel", {"agent": "far", "taskId": "t-1"}),
        ):
            result = await tool.run(action, args, TARGET)
            text = json.dumps(result)
            assert isinstance(result.get("error"), str) and expected in result["error"], text[:300]
            assert len(result["error"]) < 600
            assert_clean(text)
    assert other.hits, "the calls went to the card's interface URL"
    for _, _, headers in other.hits:  # another origin: the key stays home
        assert KEY not in json.dumps(headers)
        assert "authorization" not in headers
    assert not pending.file_path(workspace).exists()
    assert_clean(*(r.getMessage() for r in caplog.records))
    assert_clean(*(r.exc_text or "" for r in caplog.records))
