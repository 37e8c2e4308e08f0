"""Login throttling (django-axes): wrong passwords lock one user at one address out for the cool-off, with a clear
message; other addresses and users go on; the lock expires, a good login clears the count, `axes_reset` unlocks;
behind a trusted proxy the client's own address counts, and only then."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import time_machine
from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.http import HttpResponse
from django.test import AsyncClient, Client, override_settings

from a2aconsole.public_site import load_public_site
from tests.web.test_settings import ROOT, clean_env

PASSWORD = "correct horse battery staple"
WRONG = "not the password at all"
ALICE, BOB = "198.51.100.1", "198.51.100.2"
LOCKED = "Too many failed log-ins for this account from your address"


@pytest.fixture(autouse=True)
def owner(settings: object) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # type: ignore[attr-defined]
    get_user_model().objects.create_user("owner", password=PASSWORD)
    get_user_model().objects.create_user("helper", password=PASSWORD)


def attempt(address: str, password: str, username: str = "owner", **headers: str) -> HttpResponse:
    """One login POST from `address`, in a fresh browser."""
    return Client(REMOTE_ADDR=address, **headers).post("/login/", {"username": username, "password": password})


def lock(address: str, username: str = "owner", **headers: str) -> HttpResponse:
    """Wrong passwords up to the limit: all but the last are plain failures, the last locks the pair out."""
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        failed = attempt(address, WRONG, username, **headers)
        assert failed.status_code == 200 and "Please enter a correct username and password" in failed.content.decode()
    return attempt(address, WRONG, username, **headers)


def assert_locked(response: HttpResponse) -> None:
    body = response.content.decode()
    assert response.status_code == 429, body
    assert LOCKED in body and "refused for 15 minutes after the last failure" in body
    assert "<code>python manage.py axes_reset</code>" in body
    assert response["Retry-After"] == "900"
    assert 'name="password"' in body  # still the login page, username kept
    assert "sessionid" not in response.cookies


def assert_logged_in(response: HttpResponse) -> None:
    assert response.status_code == 302 and response["Location"] == "/"
    assert response.cookies["sessionid"].value


@pytest.fixture
def clock() -> Iterator[time_machine.Coordinates]:
    with time_machine.travel(datetime(2026, 3, 1, 12, 0, tzinfo=UTC), tick=False) as traveller:
        yield traveller


@pytest.mark.django_db
def test_defaults_are_five_tries_and_fifteen_minutes() -> None:
    limits = (settings.AXES_FAILURE_LIMIT, settings.AXES_COOLOFF_TIME)
    assert limits == (5, timedelta(minutes=15))
    assert settings.AXES_LOCKOUT_PARAMETERS == [["username", "ip_address"]]


@pytest.mark.django_db  # for the autouse owner
def test_the_environment_sets_the_limit_and_the_cool_off(tmp_path: Path) -> None:
    env = clean_env(tmp_path / "data", tmp_path / "ws", DJANGO_SETTINGS_MODULE="a2aconsole.settings")
    env.update(A2ACONSOLE_LOGIN_FAILURE_LIMIT="10", A2ACONSOLE_LOGIN_COOLOFF="01:00:00")
    show = "from django.conf import settings as s; print(s.AXES_FAILURE_LIMIT, s.AXES_COOLOFF_TIME)"
    run = subprocess.run([sys.executable, "-c", show], cwd=ROOT, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "10 1:00:00"


@pytest.mark.django_db
def test_wrong_passwords_lock_that_user_at_that_address(clock: time_machine.Coordinates) -> None:
    assert_locked(lock(ALICE))
    assert_locked(attempt(ALICE, PASSWORD))  # while locked, even the right password is refused
    page = Client(REMOTE_ADDR=ALICE).get("/login/")
    assert page.status_code == 200  # the page itself still shows


@pytest.mark.django_db
def test_another_address_or_user_is_not_locked(clock: time_machine.Coordinates) -> None:
    assert_locked(lock(ALICE))
    assert_logged_in(attempt(BOB, PASSWORD))
    assert_logged_in(attempt(ALICE, PASSWORD, username="helper"))
    assert_locked(attempt(ALICE, PASSWORD))


@pytest.mark.django_db
def test_the_lock_expires_after_the_cool_off(clock: time_machine.Coordinates) -> None:
    assert_locked(lock(ALICE))
    clock.shift(timedelta(minutes=14, seconds=59))
    assert_locked(attempt(ALICE, PASSWORD))  # a try while locked does not extend the lock
    clock.shift(timedelta(seconds=2))
    assert_logged_in(attempt(ALICE, PASSWORD))


@pytest.mark.django_db
def test_a_good_login_clears_the_count(clock: time_machine.Coordinates) -> None:
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert attempt(ALICE, WRONG).status_code == 200
    assert_logged_in(attempt(ALICE, PASSWORD))
    assert_locked(lock(ALICE))  # a full count again, not one more


@pytest.mark.django_db
def test_axes_reset_unlocks(clock: time_machine.Coordinates) -> None:
    assert_locked(lock(ALICE))
    call_command("axes_reset", verbosity=0)
    assert_logged_in(attempt(ALICE, PASSWORD))


@pytest.mark.django_db
def test_behind_a_trusted_proxy_the_forwarded_address_counts(clock: time_machine.Coordinates) -> None:
    site = load_public_site({"A2ACONSOLE_PUBLIC_URL": "https://console.example", "A2ACONSOLE_TRUST_PROXY": "true"})
    proxied = {"HTTP_X_FORWARDED_PROTO": "https", "HTTP_HOST": "console.example"}
    with override_settings(**site.django_settings(site.url), ALLOWED_HOSTS=["console.example"]):
        assert_locked(lock("127.0.0.1", HTTP_X_FORWARDED_FOR=ALICE, **proxied))
        assert_logged_in(attempt("127.0.0.1", PASSWORD, HTTP_X_FORWARDED_FOR=BOB, **proxied))
        assert_locked(attempt("127.0.0.1", PASSWORD, HTTP_X_FORWARDED_FOR=ALICE, **proxied))


@pytest.mark.django_db
def test_without_a_trusted_proxy_a_forged_address_does_not_escape(clock: time_machine.Coordinates) -> None:
    assert_locked(lock(ALICE, HTTP_X_FORWARDED_FOR="203.0.113.1"))
    assert_locked(attempt(ALICE, PASSWORD, HTTP_X_FORWARDED_FOR="203.0.113.2"))


@pytest.mark.django_db(transaction=True)
async def test_the_lock_holds_on_the_asgi_path() -> None:
    """daphne runs the middleware chain async, where axes calls the lockout page with other arguments."""

    async def try_async(password: str) -> HttpResponse:
        client = AsyncClient(REMOTE_ADDR=ALICE)
        return await client.post("/login/", {"username": "owner", "password": password})

    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert (await try_async(WRONG)).status_code == 200
    await sync_to_async(assert_locked)(await try_async(WRONG))
    await sync_to_async(assert_locked)(await try_async(PASSWORD))


def change(client: Client, old: str, new: str = "a brand new passphrase 42") -> HttpResponse:
    return client.post("/password/", {"old_password": old, "new_password1": new, "new_password2": new})


def assert_changed(response: HttpResponse) -> None:
    assert response.status_code == 302 and response["Location"] == "/", response.content.decode()


def logged_in_at(address: str) -> Client:
    client = Client(REMOTE_ADDR=address)
    client.force_login(get_user_model().objects.get(username="owner"))
    return client


@pytest.mark.django_db
def test_wrong_old_passwords_lock_the_password_change_like_the_login(clock: time_machine.Coordinates) -> None:
    tab = logged_in_at(ALICE)
    answers = [change(tab, WRONG) for _ in range(12)]
    limit = settings.AXES_FAILURE_LIMIT
    for wrong in answers[: limit - 1]:
        assert wrong.status_code == 200 and "Your old password was entered incorrectly" in wrong.content.decode()
    for refused in answers[limit - 1 :]:
        body = refused.content.decode()
        assert refused.status_code == 429 and refused["Retry-After"] == "900", body
        assert "Too many wrong passwords for this account from your address" in body and "15 minutes" in body
        assert 'name="old_password"' in body  # still the password page
    assert change(tab, PASSWORD).status_code == 429  # while locked, the right one too
    assert get_user_model().objects.get(username="owner").check_password(PASSWORD)  # nothing changed
    assert_locked(attempt(ALICE, PASSWORD))  # one count: the login at that address is locked too
    assert_changed(change(logged_in_at(BOB), PASSWORD))  # another address is not
    clock.shift(timedelta(minutes=15, seconds=1))
    assert_changed(change(logged_in_at(ALICE), "a brand new passphrase 42", "yet another passphrase 7"))
    assert get_user_model().objects.get(username="owner").check_password("yet another passphrase 7")


@pytest.mark.django_db
def test_a_right_old_password_clears_the_count(clock: time_machine.Coordinates) -> None:
    tab = logged_in_at(ALICE)
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert change(tab, WRONG).status_code == 200
    assert_changed(change(tab, PASSWORD))
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):  # a full count again, not one more
        assert change(tab, WRONG).status_code == 200


@pytest.mark.django_db(transaction=True)
async def test_the_password_change_lock_holds_on_the_asgi_path() -> None:
    client = AsyncClient(REMOTE_ADDR=ALICE)
    await client.aforce_login(await get_user_model().objects.aget(username="owner"))
    wrong = {
        "old_password": WRONG,
        "new_password1": "a brand new passphrase 42",
        "new_password2": "a brand new passphrase 42",
    }
    answers = [(await client.post("/password/", wrong)).status_code for _ in range(settings.AXES_FAILURE_LIMIT + 1)]
    assert answers == [200] * (settings.AXES_FAILURE_LIMIT - 1) + [429, 429]
