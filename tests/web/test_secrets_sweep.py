"""No secret leaves: one sweep that sets distinctive secrets everywhere, drives every way in, then greps every sink.

Secrets: an agent key (agents.json), a wrong key (a 401), keys in agent URLs (user info and query), a
webhook URL's query, the webhook signing secret, the Telegram bot token (environment), API tokens and
push tokens. Ways in: the JSON API over a real loopback server (every action, bad bodies, wrong tokens,
remote errors: 401, unreachable, bad files), real pushes from agents plus forged ones, the owner's pages,
the management commands, and Telegram/webhook deliveries that succeed, fail, get 429 or find nobody.
Sinks: every log record at DEBUG (app, httpx, httpcore, a2a-sdk, django, uvicorn), every database table
(the webhook's secret and URL only where they must live), pending.json (push tokens only in `pushToken`), every HTTP
answer (the shown-once page excepted), every event (TaskEvent rows and the live-update payloads), the
far ends' inboxes, and the reprs of the objects that hold secrets.
"""

from __future__ import annotations

import json
import logging
import socket
from collections.abc import AsyncIterator, Iterator
from io import StringIO
from typing import Any

import httpx
import pytest
from asgiref.sync import sync_to_async
from django.core.management import call_command
from django.db import connection
from django.test import AsyncClient

from a2aconsole.asgi import application
from a2aconsole.core import pending
from a2aconsole.core.clock import SystemClock
from a2aconsole.core.config import ClientSettings
from a2aconsole.core.events import Event
from a2aconsole.core.files.agents import AgentEntry
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.remote.log_masking import MaskUrls
from a2aconsole.web.broadcast import ChannelsBroadcast
from a2aconsole.web.delivery.telegram import TelegramBackend
from a2aconsole.web.delivery.webhook import WebhookBackend
from a2aconsole.web.models import ApiToken, ChatTarget, TaskEvent
from a2aconsole.web.process.runtime import build_runtime, close_runtime, install_runtime
from tests.support.hosts import BotApi, LoopbackHost
from tests.support.watching import LoopbackServer, WaitableSink

pytestmark = pytest.mark.django_db(transaction=True)

AGENT_KEY = "SWEEP-agentkey-a1b2c3"
WRONG_KEY = "SWEEP-wrongkey-d4e5f6"
URL_PASS = "SWEEP-urlpass-g7h8"
URL_QUERY = "SWEEP-urlquery-i9j0"
DOWN_PASS = "SWEEP-downpass-k1l2"
DOWN_QUERY = "SWEEP-downquery-m3n4"
HOOK_QUERY = "SWEEP-hookquery-o5p6"
BOT_TOKEN = "987654:SWEEP-bottoken-q7r8"
WAIT = 0.3  # seconds a send waits for its task (real time: the console runs for real here)
LOGGERS = ("", "a2aconsole", "httpx", "httpcore", "a2a", "django", "uvicorn", "daphne", "channels")


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.fixture
def far_ends() -> Iterator[tuple[BotApi, LoopbackHost]]:
    bot, hook = BotApi().start(), LoopbackHost().start()
    yield bot, hook
    bot.stop()
    hook.stop()


@pytest.fixture
async def console() -> AsyncIterator[LoopbackServer]:
    async with LoopbackServer(application) as s:
        yield s


class Recorder:
    """Every HTTP answer the test got, to grep afterwards."""

    def __init__(self) -> None:
        self.answers: list[str] = []

    def keep(self, what: str, status: int, headers: Any, body: bytes) -> None:
        self.answers.append(f"{what} {status} {dict(headers)} {body.decode(errors='replace')}")


async def test_no_secret_reaches_any_sink(
    workspace: Workspace,
    make_agent: Any,
    far_ends: tuple[BotApi, LoopbackHost],
    console: LoopbackServer,
    caplog: Any,
    monkeypatch: Any,
    django_user_model: Any,
    settings: Any,
) -> None:
    settings.WORKSPACE_DIR = workspace.root  # the console's own pages show this workspace's agents
    for name in LOGGERS:
        caplog.set_level(logging.DEBUG, logger=name)
    bot, hook = far_ends
    monkeypatch.setenv("SWEEP_BOT_TOKEN", BOT_TOKEN)
    monkeypatch.setenv("TELEGRAM_API_BASE", bot.url)
    keyed = make_agent(key=AGENT_KEY, streaming=False)  # push-followed, needs its key
    plain = make_agent()  # stream-followed; its agents.json URL carries a key in user info and query
    strict = make_agent(key="the-real-key-nobody-has")
    plain_url = plain.url.replace("http://", f"http://user:{URL_PASS}@") + f"?key={URL_QUERY}"
    down_url = f"http://user:{DOWN_PASS}@127.0.0.1:{closed_port()}/?token={DOWN_QUERY}"
    workspace.save_agents(
        [
            {"name": "keyed", "url": keyed.url, "key": AGENT_KEY},
            {"name": "plain", "url": plain_url},
            {"name": "strict", "url": strict.url, "key": WRONG_KEY},
            {"name": "down", "url": down_url, "key": AGENT_KEY},
        ],
        None,
    )
    (workspace.root / "note.txt").write_text("a note")

    sink = WaitableSink(ChannelsBroadcast())  # the real sink, each event kept to grep
    rt = install_runtime(
        build_runtime(
            client_settings=ClientSettings(push_base_url=console.url, wait_seconds=WAIT),
            clock=SystemClock(),
            events=sink,
        )
    )
    rec = Recorder()
    secrets: set[str] = {AGENT_KEY, WRONG_KEY, URL_PASS, URL_QUERY, DOWN_PASS, DOWN_QUERY, HOOK_QUERY, BOT_TOKEN}
    push_tokens: set[str] = set()

    def collect_push_tokens() -> None:
        push_tokens.update(r.push_token for r in pending.read(workspace).records if r.push_token)

    try:
        await rt.start_registry([workspace])

        # the owner: adds the webhook target and a token in the console (each shown once), browses every page
        user = await django_user_model.objects.acreate(username="owner")
        owner = AsyncClient()
        await owner.aforce_login(user)
        hook_url = f"{hook.url}/results?sig={HOOK_QUERY}"
        form = {"id": "hook", "name": "Hook", "workspace": str(workspace.root), "backend": "webhook", "url": hook_url}
        resp = await owner.post("/targets/add/", {**form, "enabled": "on"})
        hook_target = await ChatTarget.objects.aget(pk="hook")
        webhook_secret = hook_target.backend_settings["secret"]
        assert webhook_secret in resp.content.decode()  # shown once, on this page only: not recorded
        secrets.add(webhook_secret)
        await ChatTarget.objects.acreate(
            id="tg",
            name="Telegram",
            workspace=str(workspace.root),
            backend="telegram",
            backend_settings={"chat_id": 42, "token_env": "SWEEP_BOT_TOKEN"},
        )
        resp = await owner.post("/targets/tg/tokens/", {"name": "host"})
        tg_token = resp.content.decode().split("a2ac_", 1)[1].split("<", 1)[0].split('"', 1)[0]
        tg_token = "a2ac_" + tg_token
        assert await ApiToken.objects.filter(target_id="tg").acount() == 1
        _, hook_token = await sync_to_async(ApiToken.issue)(hook_target, "hook host")
        secrets |= {tg_token, hook_token}

        async with httpx.AsyncClient(base_url=console.url, timeout=30) as http:

            async def api(target: str, token: str, body: Any) -> dict[str, Any]:
                raw = body if isinstance(body, bytes) else json.dumps(body).encode()
                for _ in range(5):  # 503: the test database (shared-cache SQLite) was locked a moment; a host retries
                    r = await http.post(
                        f"/api/v1/targets/{target}/tool", content=raw, headers={"Authorization": f"Bearer {token}"}
                    )
                    rec.keep(f"api {target}", r.status_code, r.headers, r.content)
                    if r.status_code != 503:
                        break
                assert r.status_code < 500, r.text
                return r.json()

            # every action, and every kind of failure, through the API
            assert {a["name"] for a in (await api("tg", tg_token, {"action": "agents"}))["agents"]} >= {"keyed"}

            async def held(target: str, token: str, body: dict[str, Any]) -> dict[str, Any]:
                """A send whose task outlives the send's short wait (WAIT): it comes back with a watch."""
                result = await api(target, token, body)
                assert result.get("taskId"), result
                collect_push_tokens()
                return result

            first = await held("tg", tg_token, {"action": "send", "agent": "keyed", "message": "hold d1"})
            await held(
                "tg", tg_token, {"action": "send", "agent": "plain", "message": "hold d2", "files": ["note.txt"]}
            )
            await held("hook", hook_token, {"action": "send", "agent": "keyed", "message": "hold d1", "hops": 2})
            keyed.release("d1")
            plain.release("d2")
            for body in (
                {"action": "send", "agent": "strict", "message": "hello"},  # 401 from the agent
                {"action": "send", "agent": "down", "message": "hello"},  # nobody there
                {"action": "send", "agent": "keyed", "message": "hi", "files": ["missing.pdf"]},
                {"action": "send", "agent": "keyed", "message": "hi", "files": ["../../etc/passwd"]},
                {"action": "status", "agent": "strict", "taskId": "t-1"},
                {"action": "cancel", "agent": "down", "taskId": "t-1"},
                {"action": "send", "agent": "nobody", "message": "hi"},
                {"action": "send", "agent": "keyed", "message": 5},
                b"{broken",
            ):
                result = await api("tg", tg_token, body)
                assert "error" in result, result
            for token, target in ((hook_token, "tg"), ("a2ac_wrong", "tg"), (tg_token, "nope")):
                r = await http.post(
                    f"/api/v1/targets/{target}/tool",
                    json={"action": "agents"},
                    headers={"Authorization": f"Bearer {token}"},
                )
                rec.keep("api wrong token", r.status_code, r.headers, r.content)
                assert r.status_code == 401
            try:
                await sink.until_kind("delivered", 3)
            except TimeoutError:
                raise AssertionError(
                    [(f.get("kind"), f.get("target"), f.get("text", "")[:80]) for f in map(Event.to_json, sink.events)]
                ) from None
            await api("tg", tg_token, {"action": "status", "agent": "keyed", "taskId": first["taskId"]})

            # a running task: forged pushes for its watch, then a cancel
            running = await held("tg", tg_token, {"action": "send", "agent": "keyed", "message": "hold sweep"})
            [watch] = [r for r in pending.read(workspace).records if r.task_id == running["taskId"]]
            assert watch.push_token
            push_url = f"/a2a/push/{watch.watch_id}"
            good = {"statusUpdate": {"taskId": watch.task_id, "status": {"state": "TASK_STATE_WORKING"}}}
            for body, headers in (
                (good, {"X-A2A-Notification-Token": "forged"}),
                ({"task": {"id": "other"}}, {"X-A2A-Notification-Token": watch.push_token}),
                (good, {"Authorization": f"Bearer {watch.push_token}"}),
            ):
                r = await http.post(push_url, json=body, headers=headers)
                rec.keep("push", r.status_code, r.headers, r.content)
                assert r.status_code in (200, 400, 404)
            await api("tg", tg_token, {"action": "cancel", "agent": "keyed", "taskId": watch.task_id})
            keyed.release("sweep")

        # the owner's pages and the commands
        pages = [
            "/",
            "/dashboard/agents/",
            "/agents/",
            "/agent/keyed/",
            "/agent/plain/",
            "/agent/plain/edit/",
            "/agent/keyed/edit/",
            "/agents/file/",
            "/a2a",
            "/targets/",
            "/targets/tg/",
            "/targets/hook/",
            "/watches/",
            "/inbox/tg/",
            "/chat/tg/",
            f"/tasks/keyed/{watch.task_id}/",
        ]
        for page in pages:
            r = await owner.get(page)
            rec.keep(page, r.status_code, r.headers, r.content)
            assert r.status_code in (200, 302), page

        def commands() -> str:
            out = StringIO()
            call_command("targets", "list", stdout=out)
            call_command("a2a_status", stdout=out)
            return out.getvalue()

        rec.keep("commands", 0, {}, (await sync_to_async(commands)()).encode())

        # deliveries that fail: 429 then 500, nobody there; a webhook answering 500, or nobody there
        clock = SystemClock()  # retry_after 0: no real wait
        tg = ChatTarget(id="tg", backend="telegram", backend_settings={"chat_id": 42, "token_env": "SWEEP_BOT_TOKEN"})
        bot.script = [(429, {"ok": False, "parameters": {"retry_after": 0}}), (500, {"ok": False})]
        assert not await TelegramBackend(rt.http, clock).deliver(tg, "will fail")
        env = {"SWEEP_BOT_TOKEN": BOT_TOKEN, "TELEGRAM_API_BASE": f"http://127.0.0.1:{closed_port()}"}
        assert not await TelegramBackend(rt.http, clock, env).deliver(tg, "nobody there")
        hook.script = [(500, {"error": "down"})]
        assert not await WebhookBackend(rt.http, clock).deliver(hook_target, "will fail")
        gone = ChatTarget(
            id="gone",
            backend="webhook",
            backend_settings={
                "url": f"http://u:{DOWN_PASS}@127.0.0.1:{closed_port()}/x?sig={HOOK_QUERY}",
                "secret": webhook_secret,
            },
        )
        assert not await WebhookBackend(rt.http, clock).deliver(gone, "nobody there")
    finally:
        await close_runtime()

    secrets |= push_tokens
    assert len(bot.messages) >= 2 and any(h.status == 200 for h in hook.hits)  # real deliveries happened
    assert await TaskEvent.objects.acount() > 0
    assert push_tokens and len(secrets) >= 12

    def scan(where: str, text: str, allowed: tuple[str, ...] = ()) -> None:
        for secret in secrets - set(allowed):
            assert secret not in text, (
                f"{secret!r} leaked into {where}: …{text[max(0, text.find(secret) - 200) :][:400]}"
            )

    # logs, with their tracebacks, as the handler that settings.LOGGING configured writes them (its filter masks)
    formatter = logging.Formatter("%(name)s %(message)s")
    configured = [h for h in logging.getLogger().handlers if any(isinstance(f, MaskUrls) for f in h.filters)]
    assert configured
    for record in caplog.records:
        if record.name.startswith("a2a.server"):
            continue  # the test agents' own server logs (they run in this process): the far end, not us
        assert all(h.filter(record) for h in configured)
        scan(f"log {record.name}", formatter.format(record))
    assert any(r.name == "httpx" for r in caplog.records)  # httpx did log its requests: masked

    # HTTP answers, events, far ends
    for answer in rec.answers:
        scan("an HTTP answer", answer)
    scan("live updates", json.dumps([e.to_json() for e in sink.events]))
    for h in bot.hits:
        scan("a Telegram message", h.body.decode())
    for h in hook.hits:
        scan("a webhook POST", h.body.decode() + json.dumps(h.headers))

    # the database: the webhook secret lives in its target's settings, nowhere else
    def dump() -> dict[str, str]:
        with connection.cursor() as c:
            out = {}
            for table in connection.introspection.table_names(c):
                c.execute(f'SELECT * FROM "{table}"')  # table names from the schema itself
                out[table] = repr(c.fetchall())
            return out

    for table, rows in (await sync_to_async(dump)()).items():
        if table == "web_chattarget":  # where the webhook's URL and secret must live: once each
            assert rows.count(webhook_secret) == 1 and rows.count(HOOK_QUERY) == 1
            rows = rows.replace(webhook_secret, "").replace(HOOK_QUERY, "")
        scan(f"table {table}", rows)

    # pending.json: push tokens in `pushToken` and nowhere else
    raw = json.loads(pending.file_path(workspace).read_text()) if pending.file_path(workspace).exists() else []
    for r in raw:
        r.pop("pushToken", None)
    scan("pending.json", json.dumps(raw))

    # reprs
    for e in workspace.read_agents().entries:
        scan("repr(AgentEntry)", repr(e) + str(e))
    for r in pending.read(workspace).records:
        scan("repr(WatchRecord)", repr(r))
    scan("repr(ChatTarget)", repr(hook_target) + str(hook_target))
    scan("repr(AgentEntry)", repr(AgentEntry("x", down_url, key=AGENT_KEY)))
