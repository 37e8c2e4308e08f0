"""Real A2A agents on a third implementation: `fasta2a` 2.x (pydantic's own A2A server, what pydantic-ai's agents
are served by), which shares no code with either SDK. Served by uvicorn on 127.0.0.1 in a thread, as the Python
`TestAgent` is, with the library's stock parts: `FastA2A` (its card, its JSON-RPC endpoint, its 1.0 method names),
`InMemoryBroker` and `InMemoryStorage`. Only the `Worker` is ours, a plain one with no model.

What the stock parts do, and the tests rely on (issue 26):

- `InMemoryStorage` writes every status timestamp without a time zone (`datetime.now().isoformat()`), which
  a strict 1.0 parse refuses;
- `TaskManager.send_message` opens a new task for every message: a follow-up's `taskId` is ignored, the answer to a
  question is a new task in the same context (the worker reads the question from the context it stored);
- `InMemoryStorage.update_task` writes no status message: the worker writes its message into the stored status
  itself (the library's `TaskStatus` has the field), as well as into the history, where the stock parts keep it;
- the card is served at `/.well-known/agent-card.json` (protocol 1.0, JSON-RPC only); no push notifications.

The command language is the Python agent's, a subset: `hello ...` (and any other text) echoes, `hold <gate>` works
until `agent.release(gate)`, `steps <n> <gate> <end>` (n status messages `working i/n` after the gate, completed
after the gate <end>), `ask` asks "Which colour?" (the answer, a new task, completes with `got answer: <text>`; an
answer `hold <gate>` first works until the gate), `file` completes with the PDF artifact, `fail` fails with
`boom: cannot do that`.

The stock worker runs one task operation after another; this one runs them side by side, so a held task does not
hold the next message (as a worker over a real model's API would).
"""

from __future__ import annotations

import asyncio
import base64
import json
import socket
import threading
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import uvicorn
from fasta2a import FastA2A, Skill, Worker
from fasta2a.broker import InMemoryBroker
from fasta2a.schema import Artifact, Message, Part, TaskIdParams, TaskSendParams, TaskState
from fasta2a.storage import InMemoryStorage

from tests.support.agents import PDF_BYTES, Received, serve_in_thread, stop_serving

QUESTION = "Which colour?"


@dataclass
class ScriptedWorker(Worker[dict[str, Any]]):
    """A plain worker (no model): the first word of the message picks the scenario. Its context store holds, per
    context, the question the last task asked (`{"asked": task id}`)."""

    agent: Fasta2aAgent | None = None

    async def _loop(self) -> None:
        async with anyio.create_task_group() as tg:
            async for task_operation in self.broker.receive_task_operations():
                tg.start_soon(self._handle_task_operation, task_operation)

    async def _say(self, task_id: str, context_id: str, state: TaskState, text: str, **more: Any) -> None:
        """The task's new state with a message from the agent: stored (status and history) and streamed."""
        message = Message(role="agent", parts=[Part(text=text)], message_id=str(uuid.uuid4()))
        task = await self.storage.update_task(task_id, state=state, new_messages=[message], **more)
        task["status"]["message"] = message
        await self.publish_status(task_id, context_id, state, message)

    async def run_task(self, params: TaskSendParams) -> None:
        assert self.agent is not None
        task_id, context_id, message = params["id"], params["context_id"], params["message"]
        text = " ".join(p["text"] for p in message["parts"] if "text" in p)
        self.agent.received.append(
            Received(
                text=text,
                parts=[dict(p) for p in message["parts"]],
                metadata=dict(message.get("metadata") or {}),
                headers={},
                task_id=message.get("task_id", ""),
                context_id=context_id,
            )
        )
        context = await self.storage.load_context(context_id) or {}
        word, _, rest = text.strip().partition(" ")
        if context.get("asked"):  # the answer to the context's question, in a task of its own
            await self.storage.update_context(context_id, {})
            if word == "hold":  # an answer worked on until the test releases the gate
                await self._say(task_id, context_id, "working", f"holding {rest}")
                await self.agent.gate(rest).wait()
            said = f"got answer: {text}"
            answer = Artifact(artifact_id=str(uuid.uuid4()), name="answer", parts=[Part(text=said)])
            await self._say(task_id, context_id, "completed", said, new_artifacts=[answer])
            return
        if word == "ask":
            await self.storage.update_context(context_id, {"asked": task_id})
            await self._say(task_id, context_id, "input-required", QUESTION)
        elif word == "hold":
            await self._say(task_id, context_id, "working", f"holding {rest}")
            await self.agent.gate(rest).wait()
            result = Artifact(artifact_id=str(uuid.uuid4()), name="result", parts=[Part(text=f"released {rest}")])
            await self._say(task_id, context_id, "completed", f"released {rest}", new_artifacts=[result])
        elif word == "steps":
            n, gate, end = rest.split(" ")
            await self._say(task_id, context_id, "working", f"ready for {n} steps")
            await self.agent.gate(gate).wait()
            for i in range(1, int(n) + 1):
                await self._say(task_id, context_id, "working", f"working {i}/{n}")
            await self.agent.gate(end).wait()
            await self._say(task_id, context_id, "completed", f"{n} steps done")
        elif word == "file":
            pdf = Part(raw=base64.b64encode(PDF_BYTES).decode(), media_type="application/pdf", filename="report.pdf")
            report = Artifact(artifact_id=str(uuid.uuid4()), name="report", parts=[pdf])
            await self._say(task_id, context_id, "completed", "here is the report", new_artifacts=[report])
        elif word == "fail":
            await self._say(task_id, context_id, "failed", "boom: cannot do that")
        else:
            echo = Artifact(artifact_id=str(uuid.uuid4()), name="result", parts=[Part(text=f"echo: {text}")])
            await self._say(task_id, context_id, "completed", f"echo: {text}", new_artifacts=[echo])

    async def cancel_task(self, params: TaskIdParams) -> None:
        task = await self.storage.load_task(params["id"])
        if task is not None and task["status"]["state"] in ("submitted", "working", "input-required"):
            await self._say(params["id"], task["context_id"], "canceled", "cancelled by request")

    def build_message_history(self, history: list[Message]) -> list[Any]:
        return list(history)

    def build_artifacts(self, result: Any) -> list[Artifact]:
        return [Artifact(artifact_id=str(uuid.uuid4()), name="result", parts=[Part(text=str(result))])]


class _MethodRecorder:
    """Records the JSON-RPC method of every POST (as `TestAgent.methods`), then hands the request to the app."""

    def __init__(self, app: Any, methods: list[str]) -> None:
        self.app, self.methods = app, methods

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        chunks, more = [], True
        while more:
            message = await receive()
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(chunks)
        try:
            method = json.loads(body).get("method", "")
        except (ValueError, AttributeError):
            method = ""
        self.methods.append(method if isinstance(method, str) else "")
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


class Fasta2aAgent:
    """A running fasta2a agent: `url` (its base URL), `received` (the messages its worker got: their `task_id` is
    the task fasta2a made, whatever the message named), `methods` (the JSON-RPC methods called), `release(gate)`,
    `stop()`."""

    __test__ = False
    sdk = "fasta2a"

    def __init__(self, name: str = "fasta2a test agent") -> None:
        self.received: list[Received] = []
        self._gates: dict[str, asyncio.Event] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self._sock = sock
        self.port = sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/"
        self.storage: InMemoryStorage[dict[str, Any]] = InMemoryStorage()
        broker = InMemoryBroker()
        worker = ScriptedWorker(broker=broker, storage=self.storage, agent=self)

        @asynccontextmanager
        async def lifespan(app: FastA2A) -> AsyncIterator[None]:
            async with app.task_manager, worker.run():
                yield

        skills = [
            Skill(
                id="echo",
                name="Echo",
                description="Repeats what it is told",
                tags=["test"],
                examples=["hello there"],
                input_modes=["text/plain"],
                output_modes=["text/plain"],
            )
        ]
        self.app = FastA2A(
            storage=self.storage,
            broker=broker,
            name=name,
            url=self.url,
            description="A scripted fasta2a agent for tests",
            skills=skills,
            default_input_modes=["text/plain"],
            default_output_modes=["text/plain"],
            docs_url=None,
            lifespan=lifespan,
        )
        self.methods: list[str] = []  # the JSON-RPC method of every POST, in order (its names are 1.0's)
        recorded = _MethodRecorder(self.app, self.methods)
        self.server = uvicorn.Server(uvicorn.Config(recorded, log_level="warning", lifespan="on"))
        self.thread: threading.Thread | None = None

    def __repr__(self) -> str:
        return f"Fasta2aAgent({self.url})"

    def gate(self, name: str) -> asyncio.Event:
        ev = self._gates.get(name)
        if ev is None:
            ev = self._gates[name] = asyncio.Event()
        return ev

    def release(self, name: str) -> None:
        """Let every `hold <name>` task complete (thread-safe)."""
        assert self._loop is not None
        self._loop.call_soon_threadsafe(lambda: self.gate(name).set())

    def start(self) -> Fasta2aAgent:
        serve_in_thread(self, f"fasta2a-agent-{self.port}")
        return self

    def stop(self) -> None:
        stop_serving(self)
