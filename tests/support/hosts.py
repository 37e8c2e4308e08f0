"""Real loopback HTTP servers that play the far end of a delivery: the Telegram Bot API and a webhook host.

Each runs a Starlette app under uvicorn in a thread on 127.0.0.1 (like tests/support/agents.py), records
every request it gets, and answers from a script of responses (then 200 OK once the script runs out).
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route


@dataclass
class Hit:
    """One request the server got."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    status: int = 0

    def json(self) -> Any:
        return json.loads(self.body)


class LoopbackHost:
    """A recording HTTP server. `script` holds (status, json body) answers used in order."""

    __test__ = False

    def __init__(self) -> None:
        self.hits: list[Hit] = []
        self.script: list[tuple[int, Any]] = []
        self.got = threading.Event()
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self._sock = sock
        self.port = sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.server: uvicorn.Server | None = None
        self.thread: threading.Thread | None = None

    def ok_body(self, hit: Hit) -> Any:
        return {"ok": True}

    async def _handle(self, request: Request) -> JSONResponse:
        hit = Hit(request.method, request.url.path, {k.lower(): v for k, v in request.headers.items()}, b"")
        hit.body = await request.body()
        self.hits.append(hit)
        self.got.set()
        status, body = self.script.pop(0) if self.script else (200, self.ok_body(hit))
        hit.status = status
        return JSONResponse(body, status_code=status)

    def start(self) -> LoopbackHost:
        app = Starlette(routes=[Route("/{path:path}", self._handle, methods=["POST", "GET"])])
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))

        def run() -> None:
            loop = asyncio.new_event_loop()
            loop.run_until_complete(self.server.serve(sockets=[self._sock]))  # type: ignore[union-attr]
            loop.close()

        self.thread = threading.Thread(target=run, daemon=True, name=f"host-{self.port}")
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("loopback host did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.should_exit = True
            if self.thread is not None:
                self.thread.join(timeout=10)
        self._sock.close()


class BotApi(LoopbackHost):
    """Plays `POST /bot<token>/sendMessage`; `messages` are the (chat_id, text) pairs it accepted (200)."""

    def ok_body(self, hit: Hit) -> Any:
        return {"ok": True, "result": {"message_id": len(self.hits), "text": hit.json().get("text")}}

    @property
    def messages(self) -> list[tuple[Any, str]]:
        done = [h for h in self.hits if h.path.endswith("/sendMessage") and h.status == 200]
        return [(h.json()["chat_id"], h.json()["text"]) for h in done]
