"""Start-up configuration: each bad value stops `manage.py` with one line naming the variable and what is
expected; SECRET_KEY is generated once and kept in the data folder."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
OURS = ("A2AClient__", "A2A__", "A2ACONSOLE_", "DATABASE_URL", "REDIS_URL", "ALLOWED_HOSTS", "SECRET_KEY")

BAD_VALUES = [
    ("A2AClient__Enabled", "sometimes", "expected true or false"),
    ("A2AClient__WaitSeconds", "a minute", "expected a number greater than 0"),
    ("A2AClient__WatchTimeout", "1 day", "expected a duration like 1.00:00:00 (d.hh:mm:ss) or seconds > 0"),
    ("A2AClient__CardTimeoutSeconds", "-5", "expected a number greater than 0"),
    ("A2AClient__MaxFileBytes", "10MB", "expected a whole number greater than 0"),
    ("A2AClient__PushBaseUrl", "console.example", "expected an absolute http(s) URL"),
    ("A2A__PublicUrl", "ftp://console.example", "expected an absolute http(s) URL"),
    ("DATABASE_URL", "not a url", "expected a URL like postgres://"),
    ("REDIS_URL", "http://127.0.0.1:6379", "expected a URL like redis://"),
    ("ALLOWED_HOSTS", "a.example b.example", "expected host names separated by commas"),
    ("A2ACONSOLE_WORKSPACE", "{file}", "expected a folder, found a file"),
    ("A2ACONSOLE_DATA", "{file}", "expected a folder, found a file"),
    ("A2ACONSOLE_WATCH_WORKER", "separate", "expected embedded or external"),
    ("A2ACONSOLE_DEBUG", "verbose", "expected true or false"),
    ("A2ACONSOLE_PUBLIC_URL", "console.example", "expected the console's origin, such as https://console.example"),
    ("A2ACONSOLE_TRUST_PROXY", "maybe", "expected true or false"),
    ("A2ACONSOLE_SSL_REDIRECT", "true", "expected false unless A2ACONSOLE_PUBLIC_URL is https"),
    ("A2ACONSOLE_HSTS_SECONDS", "a year", "expected a whole number of seconds (0 or more)"),
    ("A2ACONSOLE_HSTS_PRELOAD", "perhaps", "expected true or false"),
    ("A2ACONSOLE_LOGIN_FAILURE_LIMIT", "five", "expected a whole number greater than 0"),
    ("A2ACONSOLE_HISTORY_DAYS", "-3", "expected a whole number of days, 0 to keep every task"),
    ("A2ACONSOLE_LOGIN_COOLOFF", "15 minutes", "expected a duration like 1.00:00:00 (d.hh:mm:ss) or seconds > 0"),
]


def clean_env(data: Path, workspace: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(OURS)}
    env.update({"A2ACONSOLE_DATA": str(data), "A2ACONSOLE_WORKSPACE": str(workspace), **extra})
    return env


def manage(env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.fixture(scope="module")
def bad_value_runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, tuple[int, str, str]]]:
    """`manage.py check` once per bad value, all started together (each is a fresh interpreter)."""
    tmp = tmp_path_factory.mktemp("settings")
    a_file = tmp / "a-file"
    a_file.write_text("not a folder")
    procs = {}
    for name, value, _ in BAD_VALUES:
        env = clean_env(tmp / "data", tmp / "ws", **{name: value.format(file=a_file)})
        procs[name] = manage(env, "check")
    runs = {}
    try:
        for name, p in procs.items():
            out, err = p.communicate(timeout=60)
            runs[name] = (p.returncode, out, err)
    finally:
        for p in procs.values():
            p.kill()
            p.communicate()
    yield runs


@pytest.mark.parametrize(("name", "value", "expected"), BAD_VALUES, ids=[b[0] for b in BAD_VALUES])
def test_bad_value_stops_start_up_with_one_line(
    bad_value_runs: dict[str, tuple[int, str, str]], name: str, value: str, expected: str
) -> None:
    code, out, err = bad_value_runs[name]
    assert code == 2
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"a2aconsole: configuration error: {name}=")
    assert expected in lines[0]


def test_database_url_error_hides_the_password(tmp_path: Path) -> None:
    env = clean_env(tmp_path / "data", tmp_path / "ws", DATABASE_URL="nosuchdb://user:hunter2secret@db.example/x")
    run = subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True)
    assert run.returncode == 2 and "DATABASE_URL" in run.stderr and "hunter2secret" not in run.stderr


def test_empty_values_count_as_unset(tmp_path: Path) -> None:
    names = ["A2AClient__Enabled", "A2AClient__WaitSeconds", "A2AClient__PushBaseUrl", "DATABASE_URL", "REDIS_URL"]
    names += ["ALLOWED_HOSTS", "A2ACONSOLE_WATCH_WORKER", "A2ACONSOLE_DEBUG", "SECRET_KEY"]
    env = clean_env(tmp_path / "data", tmp_path / "ws", **dict.fromkeys(names, ""))
    env["DJANGO_SETTINGS_MODULE"] = "a2aconsole.settings"
    show = "from django.conf import settings as s; print(s.ALLOWED_HOSTS, s.A2A_WATCH_WORKER, s.DEBUG)"
    run = subprocess.run([sys.executable, "-c", show], cwd=ROOT, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "['127.0.0.1', 'localhost', '[::1]'] embedded False"


def test_good_environment_passes_and_keeps_one_secret_key(tmp_path: Path) -> None:
    data = tmp_path / "data"
    env = clean_env(
        data,
        tmp_path / "ws",
        A2AClient__Enabled="false",
        A2AClient__WatchTimeout="1.00:00:00",
        A2A__PublicUrl="https://console.example",
        ALLOWED_HOSTS="console.example,127.0.0.1",
        DATABASE_URL="postgres://u:pw@127.0.0.1:5432/a2a",
        REDIS_URL="redis://127.0.0.1:6379/3",
        A2ACONSOLE_WATCH_WORKER="External",
        A2ACONSOLE_DEBUG="no",
    )
    env["DJANGO_SETTINGS_MODULE"] = "a2aconsole.settings"
    show = (
        "from django.conf import settings as s; print(s.SECRET_KEY, s.A2A_CLIENT.enabled, s.A2A_CLIENT.push_base_url,"
        " s.DATABASES['default']['ENGINE'], s.DATABASES['default']['NAME'],"
        " s.CHANNEL_LAYERS['default']['BACKEND'], s.A2A_WATCH_WORKER, s.DEBUG, s.ALLOWED_HOSTS)"
    )
    first = subprocess.run([sys.executable, "-c", show], cwd=ROOT, env=env, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    key, enabled, push, engine, db, layer, worker, debug, hosts = first.stdout.split(maxsplit=8)
    assert (worker, debug) == ("external", "False")
    assert (enabled, push) == ("False", "https://console.example")
    assert (engine, db) == ("django.db.backends.postgresql", "a2a")
    assert layer == "channels_redis.core.RedisChannelLayer"
    assert hosts.strip() == "['console.example', '127.0.0.1']"
    path = data / "secret_key"
    assert path.read_text().strip() == key and len(key) >= 50
    assert stat.S_IMODE(path.stat().st_mode) == 0o600

    second = subprocess.run([sys.executable, "-c", show], cwd=ROOT, env=env, capture_output=True, text=True)
    assert second.stdout.split()[0] == key  # kept, so sessions survive a restart

    elsewhere = subprocess.run(
        [sys.executable, "-c", show],
        cwd=ROOT,
        env={**env, "A2ACONSOLE_DATA": str(tmp_path / "other")},
        capture_output=True,
        text=True,
    )
    assert elsewhere.stdout.split()[0] != key  # generated per install, never a constant

    explicit = subprocess.run(
        [sys.executable, "-c", show],
        cwd=ROOT,
        env={**env, "SECRET_KEY": "from-the-environment-" + "k" * 40},
        capture_output=True,
        text=True,
    )
    assert explicit.stdout.split()[0] == "from-the-environment-" + "k" * 40


LOG_SECRETS = ("SWEEP-logpass", "SWEEP-logkey", "SWEEP-logbot")
LOG_URLS = (
    f"https://user:{LOG_SECRETS[0]}@agent.example:8443/a2a?key={LOG_SECRETS[1]}",
    f"https://api.telegram.org/bot123:{LOG_SECRETS[2]}/sendMessage",
)
LOGS_A_URL_EVERYWHERE = f"""
import logging
import django

django.setup()  # configures logging from settings.LOGGING
import a2aconsole.core.remote.client  # the modules that talk HTTP: importing them installs nothing
import a2aconsole.web.delivery.telegram

print(sorted(n for n, lg in logging.Logger.manager.loggerDict.items() if getattr(lg, "filters", None)
             and any(type(f).__name__ == "MaskUrls" for f in lg.filters)))
for name in ("httpx", "httpcore.http11", "a2a.client.card_resolver", "a2aconsole.core.watches.registry", "django",
             "django.server", "some.library", ""):
    for url in {LOG_URLS!r}:
        logging.getLogger(name).warning("GET %s from %s", url, name or "root")
"""


def test_a_url_logged_by_any_logger_is_masked_by_the_settings_log_filter(tmp_path: Path) -> None:
    """Before: only eight named loggers (httpx, httpcore, a2a-sdk's) masked, by a filter `core.client` added to
    them on import; any other logger, Django's own handlers included, wrote the key in a URL as it was."""
    env = clean_env(tmp_path / "data", tmp_path / "ws", DJANGO_SETTINGS_MODULE="a2aconsole.settings")
    run = subprocess.run(
        [sys.executable, "-c", LOGS_A_URL_EVERYWHERE], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"  # no logger got a filter by import: the handlers' filter masks
    lines = run.stderr.splitlines()
    assert len(lines) == 16 and not [s for s in LOG_SECRETS if s in run.stderr], run.stderr
    masked = ("GET https://agent.example:8443/a2a from ", "GET https://api.telegram.org/bot***/sendMessage from ")
    for line in lines:
        assert any(m in line for m in masked), line


def test_the_log_filter_is_in_the_settings_on_every_handler() -> None:
    from django.conf import settings

    logging_config = settings.LOGGING
    assert logging_config["filters"]["mask_urls"]["()"] == "a2aconsole.core.remote.log_masking.MaskUrls"
    for name, handler in logging_config["handlers"].items():
        assert "mask_urls" in handler.get("filters", []), name
