"""Behind a TLS-terminating proxy: one public URL sets trusted origins, hosts, secure cookies, HSTS and the redirect;
the proxy's headers count only when trusted; `check --deploy` is clean in that configuration."""

from __future__ import annotations

import logging
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.http import HttpResponse
from django.test import Client, override_settings

from a2aconsole.core.errors import ConfigError
from a2aconsole.public_site import ONE_YEAR, PublicSite, load_public_site
from a2aconsole.web.management.commands.serve import setup_link
from tests.web.test_settings import ROOT, clean_env

PUBLIC = "https://console.example"
PROXIED = {"A2ACONSOLE_PUBLIC_URL": PUBLIC, "A2ACONSOLE_TRUST_PROXY": "true"}
PASSWORD = "a long password 1"


def test_one_public_url_implies_the_https_settings() -> None:
    written = " HTTPS://Console.Example:443/ "
    site = load_public_site({"A2ACONSOLE_PUBLIC_URL": written, "A2ACONSOLE_TRUST_PROXY": "yes"})
    assert (site.url, site.host, site.https) == (PUBLIC, "console.example", True)
    assert (site.trust_proxy, site.ssl_redirect, site.hsts_seconds, site.hsts_preload) == (True, True, ONE_YEAR, False)
    django = site.django_settings(site.url)
    assert django["CSRF_TRUSTED_ORIGINS"] == [PUBLIC]
    assert django["SESSION_COOKIE_SECURE"] and django["CSRF_COOKIE_SECURE"]
    assert django["SECURE_PROXY_SSL_HEADER"] == ("HTTP_X_FORWARDED_PROTO", "https")
    assert django["SECURE_SSL_REDIRECT"] and django["SECURE_REDIRECT_EXEMPT"] == []
    assert django["AXES_IPWARE_META_PRECEDENCE_ORDER"] == ("HTTP_X_FORWARDED_FOR", "REMOTE_ADDR")

    # agents told to push to a plain-http address (an inside one) are not redirected
    inside = site.django_settings("http://console.internal:8000")
    assert inside["SECURE_REDIRECT_EXEMPT"] == [r"^a2a/push/"]


def test_without_a_trusted_proxy_its_headers_mean_nothing() -> None:
    site = load_public_site({"A2ACONSOLE_PUBLIC_URL": "https://[2001:db8::1]:8443"})
    assert (site.url, site.host) == ("https://[2001:db8::1]:8443", "[2001:db8::1]")
    django = site.django_settings(site.url)
    assert django["SECURE_PROXY_SSL_HEADER"] is None and not django["SECURE_SSL_REDIRECT"]
    assert django["AXES_IPWARE_META_PRECEDENCE_ORDER"] == ("REMOTE_ADDR",)
    assert django["SESSION_COOKIE_SECURE"] and django["SECURE_HSTS_SECONDS"] == ONE_YEAR

    lan = load_public_site({"A2ACONSOLE_PUBLIC_URL": "http://console.lan:8000", "A2ACONSOLE_HSTS_SECONDS": ""})
    assert (lan.https, lan.hsts_seconds, lan.ssl_redirect) == (False, 0, False)
    assert lan.django_settings(None)["CSRF_TRUSTED_ORIGINS"] == ["http://console.lan:8000"]
    assert PublicSite().django_settings(None)["CSRF_TRUSTED_ORIGINS"] == []


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"A2ACONSOLE_PUBLIC_URL": "https://console.example/console"}, "expected the console's origin"),
        ({"A2ACONSOLE_PUBLIC_URL": "https://me:pw@console.example"}, "expected the console's origin"),
        ({"A2ACONSOLE_PUBLIC_URL": "https://console.example:99999"}, "expected the console's origin"),
        ({**PROXIED, "A2ACONSOLE_HSTS_SECONDS": "-1"}, "expected a whole number of seconds"),
        ({"A2ACONSOLE_PUBLIC_URL": PUBLIC, "A2ACONSOLE_SSL_REDIRECT": "on"}, "redirected forever"),
    ],
)
def test_bad_combinations_are_refused(env: dict[str, str], expected: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(expected)):
        load_public_site(env)


def test_the_environment_reaches_the_settings(tmp_path: Path) -> None:
    show = (
        "from django.conf import settings as s; print(s.ALLOWED_HOSTS, s.CSRF_TRUSTED_ORIGINS,"
        " s.A2A_CLIENT.push_base_url, s.SECURE_HSTS_SECONDS, s.SECURE_PROXY_SSL_HEADER)"
    )

    def run(**extra: str) -> str:
        env = clean_env(tmp_path / "data", tmp_path / "ws", DJANGO_SETTINGS_MODULE="a2aconsole.settings", **extra)
        done = subprocess.run([sys.executable, "-c", show], cwd=ROOT, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    assert run(**PROXIED) == (
        "['127.0.0.1', 'localhost', '[::1]', 'console.example'] ['https://console.example']"
        " https://console.example 31536000 ('HTTP_X_FORWARDED_PROTO', 'https')"
    )
    # the push base can still name another address for agents only
    pushed = run(**PROXIED, ALLOWED_HOSTS="console.example", A2AClient__PushBaseUrl="http://10.1.2.3:8000")
    assert pushed.startswith("['console.example'] ['https://console.example'] http://10.1.2.3:8000 ")


def test_check_deploy_is_clean_behind_the_proxy(tmp_path: Path) -> None:
    def check(**extra: str) -> subprocess.CompletedProcess[str]:
        env = clean_env(tmp_path / "data", tmp_path / "ws", **extra)
        cmd = [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"]
        return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=90)

    proxied = check(**PROXIED)
    assert proxied.returncode == 0, proxied.stdout + proxied.stderr
    assert "WARNINGS" not in proxied.stdout + proxied.stderr
    assert "System check identified no issues" in proxied.stdout

    plain = check()  # without a public URL the same check names what is missing
    found = set(re.findall(r"security\.W\d+", plain.stdout + plain.stderr))
    assert plain.returncode == 1 and {"security.W004", "security.W008", "security.W012", "security.W016"} <= found


# The console answering a TLS-terminating proxy: plain http from the proxy, the browser's Host and Origin.
BROWSER = {"HTTP_HOST": "console.example", "HTTP_ORIGIN": PUBLIC}
FROM_PROXY = {**BROWSER, "HTTP_X_FORWARDED_PROTO": "https", "HTTP_X_FORWARDED_FOR": "203.0.113.9"}


def proxied_login(client: Client, password: str = PASSWORD) -> HttpResponse:
    page = client.get("/login/", **FROM_PROXY)
    assert page.status_code == 200
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.content.decode()).group(1)
    form = {"username": "owner", "password": password, "csrfmiddlewaretoken": token, "next": "/"}
    return client.post("/login/", form, **FROM_PROXY)


@pytest.mark.django_db
def test_login_through_the_proxy_works_with_the_public_url(settings: object) -> None:
    get_user_model().objects.create_user("owner", password=PASSWORD)
    site = load_public_site(PROXIED)
    with override_settings(**site.django_settings(site.url), ALLOWED_HOSTS=["127.0.0.1", "console.example"]):
        client = Client(enforce_csrf_checks=True)
        done = proxied_login(client)
        assert done.status_code == 302 and done["Location"] == "/"
        assert client.cookies["sessionid"]["secure"] and client.cookies["csrftoken"]["secure"]
        home = client.get("/", **FROM_PROXY)
        assert home.status_code == 200
        assert home["Strict-Transport-Security"] == "max-age=31536000; includeSubDomains"
        # reached as plain http (not through the proxy), the console sends the browser to https
        plain = client.get("/login/", HTTP_HOST="console.example")
        assert plain.status_code == 301 and plain["Location"] == "https://console.example/login/"


@pytest.mark.django_db
def test_login_through_the_proxy_fails_without_it(caplog: pytest.LogCaptureFixture) -> None:
    get_user_model().objects.create_user("owner", password=PASSWORD)
    with override_settings(ALLOWED_HOSTS=["127.0.0.1", "console.example"]), caplog.at_level(logging.WARNING):
        client = Client(enforce_csrf_checks=True)
        refused = proxied_login(client)
    assert refused.status_code == 403  # what the issue saw: the browser's https origin is not the console's
    assert any("Origin checking failed" in r.getMessage() for r in caplog.records)
    assert "sessionid" not in client.cookies


def test_the_setup_link_names_the_public_url(settings: object) -> None:
    assert setup_link("http://127.0.0.1:8000", "tok") == "http://127.0.0.1:8000/setup/tok/"
    settings.PUBLIC_URL = PUBLIC  # type: ignore[attr-defined]
    assert setup_link("http://127.0.0.1:8000", "tok") == "https://console.example/setup/tok/"
