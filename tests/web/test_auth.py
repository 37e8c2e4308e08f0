"""The owner login: first-run set-up from a one-time link, no default password, and every page behind login."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.http import HttpResponse
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from django.urls.resolvers import RoutePattern

from a2aconsole.web import owner

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery staple"
# reached without the owner's session
OPEN_PREFIXES = ("login/", "setup/", "api/", "a2a/push/", "static/", "healthz", "readyz", "metrics")


@pytest.fixture(autouse=True)
def data_dir(settings: object, tmp_path: Path) -> Path:
    settings.DATA_DIR = tmp_path / "data"  # type: ignore[attr-defined]
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # type: ignore[attr-defined]  # speed
    return tmp_path / "data"


def setup_post(
    client: Client, token: str, username: str = "alice", p1: str = PASSWORD, p2: str = PASSWORD
) -> HttpResponse:
    return client.post(f"/setup/{token}/", {"username": username, "password1": p1, "password2": p2})


def test_no_account_and_no_default_password_after_install(client: Client) -> None:
    assert get_user_model().objects.count() == 0
    assert not owner.owner_exists()
    for username, password in [("admin", "admin"), ("owner", "owner"), ("admin", "password"), ("owner", "")]:
        response = client.post("/login/", {"username": username, "password": password})
        assert response.status_code == 200 and "_auth_user_id" not in client.session


def test_login_page_points_a_first_visitor_to_the_setup_link(client: Client) -> None:
    assert "one-time set-up link" in client.get("/login/").content.decode()


def test_setup_link_creates_the_owner_once(client: Client, data_dir: Path) -> None:
    token = owner.issue_setup_token()
    stored = (data_dir / "setup_token").read_text()
    assert token not in stored  # only its hash is kept

    assert client.get(f"/setup/{token}x/").status_code == 404
    assert client.get("/setup/nothing/").status_code == 404
    page = client.get(f"/setup/{token}/")
    assert page.status_code == 200 and 'name="password2"' in page.content.decode()

    mismatch = setup_post(client, token, p2=PASSWORD + "!")
    assert mismatch.status_code == 200 and "didn" in mismatch.content.decode()  # "The two password fields didn't match"
    weak = setup_post(client, token, p1="password", p2="password")
    assert weak.status_code == 200 and "too common" in weak.content.decode()
    assert get_user_model().objects.count() == 0

    done = setup_post(client, token)
    assert done.status_code == 302 and done["Location"] == "/"
    alice = get_user_model().objects.get()
    assert alice.username == "alice" and alice.is_superuser and alice.check_password(PASSWORD)
    assert client.get("/").status_code == 200  # logged in as the new owner
    assert not (data_dir / "setup_token").exists()

    assert client.get(f"/setup/{token}/").status_code == 404
    assert setup_post(Client(), token, username="mallory").status_code == 404
    fresh = owner.issue_setup_token()  # even a fresh token is useless once the owner exists
    assert Client().get(f"/setup/{fresh}/").status_code == 404
    assert get_user_model().objects.count() == 1


def test_a_new_token_replaces_the_old_one(client: Client) -> None:
    old = owner.issue_setup_token()
    new = owner.issue_setup_token()
    assert client.get(f"/setup/{old}/").status_code == 404
    assert client.get(f"/setup/{new}/").status_code == 200


def test_unattended_owner_from_password(client: Client) -> None:
    token = owner.issue_setup_token()
    owner.create_owner(owner.OWNER_USERNAME, PASSWORD)
    assert owner.owner_exists()
    assert client.get(f"/setup/{token}/").status_code == 404
    assert client.post("/login/", {"username": "owner", "password": PASSWORD}).status_code == 302


def test_unattended_owner_password_must_pass_the_checks() -> None:
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError):
        owner.create_owner(owner.OWNER_USERNAME, "short")
    assert not owner.owner_exists()


def test_login_and_logout(client: Client) -> None:
    owner.create_owner("owner", PASSWORD)
    assert client.get("/").status_code == 302
    bad = client.post("/login/", {"username": "owner", "password": "wrong password"})
    assert bad.status_code == 200 and 'role="alert"' in bad.content.decode()
    good = client.post("/login/", {"username": "owner", "password": PASSWORD, "next": "/"})
    assert good.status_code == 302 and good["Location"] == "/"
    home = client.get("/")
    assert home.status_code == 200
    assert client.get("/login/").status_code == 302  # already logged in
    assert client.get("/logout/").status_code == 405  # logging out takes a POST (CSRF-protected)
    out = client.post("/logout/")
    assert out.status_code == 302 and out["Location"] == "/login/"
    assert client.get("/").status_code == 302


def _walk(patterns: list, prefix: str = "") -> list[tuple[str, RoutePattern]]:
    found = []
    for p in patterns:
        if isinstance(p, URLResolver):
            found += _walk(p.url_patterns, prefix + str(p.pattern))
        elif isinstance(p, URLPattern) and isinstance(p.pattern, RoutePattern):
            found.append((prefix + str(p.pattern), p.pattern))
    return found


def _sample_path(route: str, pattern: RoutePattern) -> str:
    """A concrete path for a route: each parameter filled with a value its converter accepts."""
    samples = {"int": "1", "uuid": str(uuid.uuid4()), "path": "x/y"}
    path = route
    for name, converter in pattern.converters.items():
        kind = type(converter).__name__.removesuffix("Converter").lower()
        path = path.replace(f"<{kind}:{name}>", samples.get(kind, "x")).replace(f"<{name}>", "x")
    return "/" + path


def test_every_console_page_but_login_and_setup_needs_the_owner() -> None:
    routes = _walk(get_resolver().url_patterns)
    console = [(r, p) for r, p in routes if not r.startswith(OPEN_PREFIXES)]
    assert ("",) != () and any(r == "" for r, _ in console)  # the dashboard is among them
    client = Client()
    for route, pattern in console:
        path = _sample_path(route, pattern)
        for method in (client.get, client.post):
            response = method(path)
            assert response.status_code == 302, f"{method.__name__.upper()} {path} answered {response.status_code}"
            assert response["Location"].startswith("/login/?next="), path
