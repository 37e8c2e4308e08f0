"""Hostile pages and agents, with the attacker's own tool: a real Chromium, the owner logged in to the real console.

- Cross-site WebSocket hijacking: a page of another origin (another loopback port) opens the console's chat
  socket. Chromium sends the session cookie along (same site); the console must refuse the socket, while its
  own pages stay live.
- Files an agent sent, loaded by a console page as its script or style sheet (as markup an agent slipped in
  would): neither may run or apply.
- A task id an agent chose so that its link leads to another console page (`../../agents/file`, `..`): the
  link, followed in Chromium, opens that task's own page.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from playwright.sync_api import BrowserContext

from a2aconsole.web.links import task_url
from tests.support.browser import live, owner_browser
from tests.support.console_server import ConsoleServer

pytestmark = [pytest.mark.timeout(120)]

CHAT_SOCKET = "/ws/console/chat/?target=console"
# Opens the socket and settles when it closes: whether it opened and how many frames it got (the console sends
# its current state at once, so an open socket gets a frame and is then closed here).
TRY_SOCKET = """url => new Promise(resolve => {
    const s = new WebSocket(url);
    let opened = false, frames = 0;
    s.onopen = () => { opened = true; };
    s.onmessage = () => { frames += 1; s.close(); };
    s.onclose = () => resolve({opened, frames});
})"""


class AttackerPage(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"<!doctype html><title>not the console</title><p>hello"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def attacker() -> Iterator[str]:
    """Another origin on the same host: a page at http://127.0.0.1:<another free port>/."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), AttackerPage)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()
    thread.join(timeout=5)


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ConsoleServer, BrowserContext]]:
    """The real console, and the owner logged in to it in a real Chromium."""
    server = ConsoleServer(tmp_path_factory.mktemp("console")).start()
    try:
        with owner_browser(server.url) as ctx:
            yield server, ctx
    finally:
        server.stop()


def test_a_page_on_another_port_cannot_open_the_consoles_socket(
    console: tuple[ConsoleServer, BrowserContext], attacker: str
) -> None:
    server, ctx = console
    assert server.url.startswith("http://127.0.0.1:") and not attacker.startswith(server.url + "/")
    page = ctx.new_page()
    page.goto(attacker)
    assert page.evaluate(TRY_SOCKET, server.ws_url + CHAT_SOCKET) == {"opened": False, "frames": 0}
    page.close()


def test_the_consoles_own_page_keeps_its_live_socket(console: tuple[ConsoleServer, BrowserContext]) -> None:
    server, ctx = console
    page = ctx.new_page()
    page.goto("/chat/console/")
    live(page)  # the page's own socket sent its first state
    assert page.evaluate(TRY_SOCKET, server.ws_url + CHAT_SOCKET) == {"opened": True, "frames": 1}
    page.close()


# Loads `url` as a script or a style sheet of the page, as a <script src> or <link rel=stylesheet> an agent
# slipped into it would, and settles with what happened: loaded or not, and the policy violations reported.
LOAD_INTO_PAGE = """([kind, url]) => new Promise(resolve => {
    const violations = [];
    document.addEventListener("securitypolicyviolation", e => violations.push([e.effectiveDirective, e.blockedURI]));
    const el = kind === "script" ? document.createElement("script") : document.createElement("link");
    if (kind === "script") el.src = url; else { el.rel = "stylesheet"; el.href = url; }
    el.onload = () => setTimeout(() => resolve({loaded: true, violations}), 0);
    el.onerror = () => setTimeout(() => resolve({loaded: false, violations}), 0);
    document.head.append(el);
})"""


def test_a_file_an_agent_sent_cannot_run_as_a_console_pages_script_or_style(
    console: tuple[ConsoleServer, BrowserContext],
) -> None:
    server, ctx = console
    planted = server.workspace.inbox_dir / "evil"
    planted.mkdir(parents=True, exist_ok=True)
    (planted / "code.js").write_text("window.pwned = 1;")
    (planted / "style.css").write_text("body { background: rgb(255, 0, 0) !important; }")
    page = ctx.new_page()
    page.goto("/chat/console/")
    live(page)
    script = page.evaluate(LOAD_INTO_PAGE, ["script", "/files/console/inbox/a2a/evil/code.js"])
    assert script["loaded"] is False and page.evaluate("window.pwned") is None
    assert script["violations"] == [["script-src-elem", f"{server.url}/files/console/inbox/a2a/evil/code.js"]]
    style = page.evaluate(LOAD_INTO_PAGE, ["style", "/files/console/inbox/a2a/evil/style.css"])
    assert style["loaded"] is False
    assert style["violations"] == [["style-src-elem", f"{server.url}/files/console/inbox/a2a/evil/style.css"]]
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") != "rgb(255, 0, 0)"
    # the console's own script and style sheet still come from its static folder
    assert page.evaluate(LOAD_INTO_PAGE, ["style", "/static/css/web.css"]) == {"loaded": True, "violations": []}
    page.close()


@pytest.mark.parametrize("task_id", ["../../../../agents/file", "a/../../../../../logout", "..", "%2e%2e", "~."])
def test_a_task_link_opens_its_own_page_whatever_the_id(
    console: tuple[ConsoleServer, BrowserContext], task_id: str
) -> None:
    server, ctx = console
    page = ctx.new_page()
    page.goto("/tasks/")
    href = task_url("evil", task_id, "console")
    page.evaluate("href => { const a = document.createElement('a'); a.href = href; a.id = 'x'; a.textContent = 'x';"
                  " document.querySelector('main').append(a); }", href)  # fmt: skip
    page.click("#x")
    page.wait_for_url(f"{server.url}{href}")
    assert page.locator("main h1 code").get_attribute("title") == task_id  # shown short, whole on hover
    page.close()
