"""The Content-Security-Policy: every answer carries a strict one, and nothing on a page needs it loosened
(no inline script, style or handler in any template or rendered page), so injected markup cannot run code."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse
from django.test import Client, override_settings
from django.urls import get_resolver, include, path

from a2aconsole.core.files.workspace import Workspace
from a2aconsole.web import owner
from a2aconsole.web.models import ApiToken, ChatTarget
from tests.support.console import create_owner
from tests.support.csp import assert_strict_csp, directives, inline_code, template_code
from tests.web.test_auth import _walk

ROOT = Path(__file__).resolve().parents[2]
HTMX_CONFIG = re.compile(r"""<meta name="htmx-config" content='([^']*)'>""")


@login_not_required
def _explode(request: HttpRequest) -> HttpResponse:
    raise RuntimeError("a bug in a view")


urlpatterns = [path("explode/", _explode), path("", include("a2aconsole.urls"))]


def _check_page(where: str, response: HttpResponse) -> None:
    assert_strict_csp(where, response)
    if response.get("Content-Type", "").startswith("text/html"):
        html = response.content.decode()
        assert not inline_code(html), f"{where}: {inline_code(html)}"
        if "<head>" in html and "htmx" in html:  # htmx may neither inject its style nor eval
            config = json.loads(HTMX_CONFIG.search(html).group(1))  # type: ignore[union-attr]
            assert config["includeIndicatorStyles"] is False and config["allowEval"] is False, where


@pytest.mark.django_db
def test_every_route_answers_with_the_strict_policy(ws: Workspace) -> None:
    """Each route of the URL list, for the owner and for a stranger, whatever the status."""
    ws.save_agents([{"name": "bot", "url": "http://127.0.0.1:9/", "key": "k-csp"}], None)
    target = ChatTarget.objects.create(id="console", name="Console", workspace=str(ws.root))
    token, _ = ApiToken.issue(target, "host")
    values = {"name": "bot", "agent": "bot", "target": "console", "target_id": "console", "token_id": str(token.pk)}
    owner_client, stranger = Client(), Client()
    owner_client.force_login(create_owner())
    seen = 0
    for route, _ in _walk(get_resolver().url_patterns):
        url = "/" + re.sub(r"<(?:\w+:)?(\w+)>", lambda m: values.get(m.group(1), "x"), route)
        for who, client in (("owner", owner_client), ("stranger", stranger)):
            response = client.get(url)
            _check_page(f"{who} GET {url} ({response.status_code})", response)
            seen += 1
    assert seen > 50


@pytest.mark.django_db
@override_settings(ROOT_URLCONF=__name__)
def test_error_pages_are_under_the_policy(ws: Workspace) -> None:
    anonymous = Client(raise_request_exception=False, enforce_csrf_checks=True)
    for url, status, text in [
        ("/no-such-page/", 404, "Not found"),
        ("/explode/", 500, "Something went wrong"),
    ]:
        response = anonymous.get(url)
        assert response.status_code == status and text in response.content.decode(), url
        _check_page(url, response)
    # a form posted without its CSRF token: the console's own 403 page, not Django's (which has a <style> block)
    refused = anonymous.post("/login/", {"username": "owner", "password": "x"})
    assert refused.status_code == 403 and "Reload the page" in refused.content.decode()
    _check_page("POST /login/ without CSRF", refused)


@pytest.mark.django_db
def test_login_and_setup_pages_are_under_the_policy(settings: object, tmp_path: Path) -> None:
    settings.DATA_DIR = tmp_path / "data"  # type: ignore[attr-defined]
    client = Client()
    _check_page("/login/", client.get("/login/"))
    token = owner.issue_setup_token()
    page = client.get(f"/setup/{token}/")
    assert page.status_code == 200 and 'name="password2"' in page.content.decode()
    _check_page("/setup/", page)


def _templates() -> list[Path]:
    folders = [Path(d) for t in settings.TEMPLATES for d in t["DIRS"]]
    folders += list((ROOT / "a2aconsole").glob("*/templates"))
    return sorted(f for folder in folders for f in folder.rglob("*.html"))


def test_no_template_holds_inline_code() -> None:
    templates = _templates()
    assert len(templates) > 20 and any(t.name == "layout.html" for t in templates)
    found = {str(t.relative_to(ROOT)): template_code(t.read_text()) for t in templates}
    assert not {name: what for name, what in found.items() if what}


@pytest.mark.parametrize(
    "html",
    [
        "<script>alert(1)</script>",
        '<script src="/static/x.js">alert(1)</script>',
        "<div><style>p{}</style></div>",
        '<p class="a" style="color:red">',
        "<img src=x onerror=alert(1)>",
        '<form hx-on::after-request="x()">',
        "<button data-hx-on:click='x()'>",
        '<a href="javascript:alert(1)">',
    ],
)
def test_the_check_finds_each_kind_of_inline_code(html: str) -> None:
    assert inline_code(html)


def test_the_template_check_sees_through_django_tags() -> None:
    assert template_code('<div{% if a > b %} style="x"{% endif %}>')
    assert template_code('<p {{ attrs }} onclick="x()">')
    assert template_code("{# a <style> in a comment #}<p>{{ x }}</p>") == []


def test_the_check_passes_what_the_policy_allows() -> None:
    page = '<script src="/static/js/console.js" defer></script><p class="x" data-style="y">on=1 style=2</p>'
    assert inline_code(page) == []


@pytest.mark.django_db
@pytest.mark.parametrize("host", ["testserver", "localhost", "127.0.0.1:8901", "[::1]:8080"])
def test_scripts_and_styles_come_only_from_the_static_folder_of_the_pages_origin(host: str, settings: object) -> None:
    """Not 'self': under 'self' a console page would run a file an agent sent (/files/...) as its script."""
    settings.ALLOWED_HOSTS = ["testserver", "localhost", "127.0.0.1", "[::1]"]  # type: ignore[attr-defined]
    policy = directives(Client().get("/login/", HTTP_HOST=host))
    assert policy["script-src"] == policy["style-src"] == [f"http://{host}/static/"]
    secure = directives(Client().get("/login/", HTTP_HOST=host, secure=True))
    assert secure["script-src"] == [f"https://{host}/static/"]


@pytest.mark.django_db
def test_a_request_for_a_host_not_allowed_gets_no_script_source() -> None:
    refused = Client().get("/login/", HTTP_HOST="evil.example")
    assert refused.status_code == 400
    assert directives(refused)["script-src"] == directives(refused)["style-src"] == ["'none'"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("name", "content"), [("code.js", b"window.pwned = 1;"), ("style.css", b"body{background:red}"), ("p.html", b"<b>")]
)
def test_a_file_an_agent_sent_is_served_as_a_download_nothing_can_run(ws: Workspace, name: str, content: bytes) -> None:
    ChatTarget.objects.create(id="console", name="Console", workspace=str(ws.root))
    planted = ws.inbox_dir / "evil" / name
    planted.parent.mkdir(parents=True)
    planted.write_bytes(content)
    client = Client()
    client.force_login(create_owner())
    got = client.get(f"/files/console/inbox/a2a/evil/{name}")
    assert got.status_code == 200 and b"".join(got.streaming_content) == content
    assert got["Content-Type"] == "application/octet-stream"
    assert got["X-Content-Type-Options"] == "nosniff"
    assert got["Content-Disposition"] == f'attachment; filename="{name}"'
    assert directives(got) == {"sandbox": [], "default-src": ["'none'"]}
