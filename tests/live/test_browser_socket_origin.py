"""Cross-site WebSocket hijacking, with the attacker's own tool: a real Chromium, the owner logged in to the real
console, and a page of another origin (another loopback port) opening the console's chat socket. Chromium sends
the session cookie along (same site); the console must refuse the socket, while its own pages stay live."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from playwright.sync_api import BrowserContext

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
