"""Django settings, from the environment. A bad value stops start-up with one line naming the variable."""

from __future__ import annotations

import dataclasses
import os
import secrets
import sys
from datetime import timedelta
from pathlib import Path

import dj_database_url
from csp.constants import NONE, SELF

from a2aconsole import data_folder
from a2aconsole.core.config import (
    ClientSettings,
    load_client_settings,
    parse_bool,
    parse_positive_number,
    parse_timespan,
)
from a2aconsole.core.errors import ConfigError
from a2aconsole.core.files import atomic_write, lock_for, read_bytes
from a2aconsole.core.metrics_access import load_metrics_access, load_metrics_listen
from a2aconsole.public_site import PublicSite, load_public_site
from a2aconsole.web.request_log import CLIENT_ERROR_LOGGERS

BASE_DIR = Path(__file__).resolve().parent.parent


def _secret_key(data_dir: Path) -> str:
    """SECRET_KEY from the environment, else one generated once and kept (0600) in the data folder."""
    if key := os.environ.get("SECRET_KEY"):
        return key
    path = data_dir / "secret_key"

    def stored() -> str:
        return (read_bytes(path) or b"").decode("utf-8", "replace").strip()

    try:
        if key := stored():
            return key
        with lock_for(data_dir / ".secret_key.lock").hold():  # two first starts at once agree on one key
            if key := stored():
                return key
            key = secrets.token_urlsafe(50)
            atomic_write(path, key.encode())  # the temp file is created 0600, so the key is never readable by others
            path.chmod(0o600)
            return key
    except OSError as e:
        raise ConfigError(
            f"A2ACONSOLE_DATA={str(data_dir)!r}: expected a writable folder for the data files ({e.strerror})"
        ) from None


def _private_data_dir(data_dir: Path) -> None:
    """Create the data folder 0700, or tighten it and its files (`serve` warns when they are not ours to tighten)."""
    try:
        data_folder.make_private(data_dir)
    except OSError as e:
        raise ConfigError(
            f"A2ACONSOLE_DATA={str(data_dir)!r}: expected a writable folder for the data files ({e.strerror})"
        ) from None


def _database(data_dir: Path) -> dict:
    url = os.environ.get("DATABASE_URL", "")
    if not url:
        return {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": str(data_dir / "db.sqlite3"),
            # one process, many threads and coroutines: wait for the write lock, take it up front, and let readers
            # go on while one writes (WAL). synchronous=NORMAL: a commit is in the WAL file when it returns, so a
            # crash of the process (even SIGKILL) loses nothing committed; only a power cut or kernel crash can
            # lose the last commits (never corrupt the file), and no commit waits for an fsync.
            "OPTIONS": {
                "timeout": 20,
                "transaction_mode": "IMMEDIATE",
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            },
        }
    try:
        # async views and workers: no persistent connections (under ASGI a request's thread ends with it), except
        # the kept ones of a2aconsole/web/db_threads.py, checked before each use
        return dj_database_url.parse(url, conn_max_age=0, conn_health_checks=True)
    except Exception:
        raise ConfigError(
            f"DATABASE_URL={url.split('@')[-1]!r}: expected a URL like postgres://user@host:5432/db or sqlite:///path"
        ) from None


REDIS_SOCKET_TIMEOUT = 30.0  # seconds; well over channels_redis's 5 s blocking read


def _channel_layer() -> dict:
    url = os.environ.get("REDIS_URL", "")
    if not url:
        # a tab's queue holds 1,000 messages, not 100: at 50 pushes a second a busy loop overflowed 100 (lost
        # messages cost a tab a read-back of the events, tests/bench/push_to_row.py --tabs 10)
        return {"BACKEND": "channels.layers.InMemoryChannelLayer", "CONFIG": {"capacity": 1000}}
    if not url.startswith(("redis://", "rediss://", "unix://")):
        raise ConfigError(f"REDIS_URL={url.split('@')[-1]!r}: expected a URL like redis://127.0.0.1:6379/0")
    # channels_redis blocks up to 5 s reading a channel (BZPOPMIN) and redis-py 8 gives up on any read after 5 s
    # by default: an idle worker or WebSocket then dies with TimeoutError. Reads wait longer than the blocking
    # read, dead peers are still noticed by keepalive and the health check.
    host = {
        "address": url,
        "socket_timeout": REDIS_SOCKET_TIMEOUT,
        "socket_connect_timeout": 5,
        "socket_keepalive": True,
        "health_check_interval": 30,
    }
    return {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": {"hosts": [host]}}


def _allowed_hosts(public: PublicSite) -> list[str]:
    """ALLOWED_HOSTS, plus the public URL's host."""
    raw = os.environ.get("ALLOWED_HOSTS") or "127.0.0.1,localhost,[::1]"
    hosts = [h.strip() for h in raw.split(",") if h.strip()]
    if not hosts or any(" " in h or "/" in h for h in hosts):  # e.g. ",,"
        raise ConfigError(
            f"ALLOWED_HOSTS={raw!r}: expected host names separated by commas, e.g. console.example,127.0.0.1"
        )
    if public.host and public.host not in hosts:
        hosts.append(public.host)
    return hosts


def _watch_worker() -> str:
    """Where the watches run: `embedded` in the serving process, or `external` (`manage.py runworker a2a-watches`)."""
    raw = os.environ.get("A2ACONSOLE_WATCH_WORKER", "")
    mode = raw.strip().lower() or "embedded"
    if mode not in ("embedded", "external"):
        raise ConfigError(f"A2ACONSOLE_WATCH_WORKER={raw!r}: expected embedded or external")
    return mode


def _history_days() -> int:
    """Days a finished task stays in the history (`web.retention`); 0, the default, keeps every task."""
    raw = os.environ.get("A2ACONSOLE_HISTORY_DAYS", "").strip() or "0"
    if raw == "0":
        return 0
    try:
        return int(parse_positive_number("A2ACONSOLE_HISTORY_DAYS", raw, integer=True))
    except ConfigError:
        raise ConfigError(
            f"A2ACONSOLE_HISTORY_DAYS={raw!r}: expected a whole number of days, 0 to keep every task"
        ) from None


def _login_throttle() -> tuple[int, timedelta]:
    """How many wrong passwords for one user from one address lock that pair out, and for how long."""
    limit = os.environ.get("A2ACONSOLE_LOGIN_FAILURE_LIMIT") or "5"
    cooloff = os.environ.get("A2ACONSOLE_LOGIN_COOLOFF") or "00:15:00"
    return (
        int(parse_positive_number("A2ACONSOLE_LOGIN_FAILURE_LIMIT", limit, integer=True)),
        timedelta(seconds=parse_timespan("A2ACONSOLE_LOGIN_COOLOFF", cooloff)),
    )


try:
    DATA_DIR = Path(os.environ.get("A2ACONSOLE_DATA") or BASE_DIR / "data").resolve()
    if DATA_DIR.exists() and not DATA_DIR.is_dir():
        raise ConfigError(f"A2ACONSOLE_DATA={str(DATA_DIR)!r}: expected a folder, found a file")
    _private_data_dir(DATA_DIR)
    WORKSPACE_DIR = Path(os.environ.get("A2ACONSOLE_WORKSPACE") or BASE_DIR / "workspace").resolve()
    if WORKSPACE_DIR.exists() and not WORKSPACE_DIR.is_dir():
        raise ConfigError(f"A2ACONSOLE_WORKSPACE={str(WORKSPACE_DIR)!r}: expected a folder, found a file")
    PUBLIC_SITE = load_public_site(os.environ)
    A2A_CLIENT: ClientSettings = load_client_settings(os.environ)
    if A2A_CLIENT.push_base_url is None and PUBLIC_SITE.url:  # the push base defaults to the public URL
        A2A_CLIENT = dataclasses.replace(A2A_CLIENT, push_base_url=PUBLIC_SITE.url)
    DATABASES = {"default": _database(DATA_DIR)}
    CHANNEL_LAYERS = {"default": _channel_layer()}
    ALLOWED_HOSTS = _allowed_hosts(PUBLIC_SITE)
    SECRET_KEY = _secret_key(DATA_DIR)
    A2A_WATCH_WORKER = _watch_worker()
    A2A_HISTORY_DAYS = _history_days()
    AXES_FAILURE_LIMIT, AXES_COOLOFF_TIME = _login_throttle()
    DEBUG = parse_bool("A2ACONSOLE_DEBUG", os.environ.get("A2ACONSOLE_DEBUG") or "false")
except ConfigError as _e:
    sys.stderr.write(f"a2aconsole: configuration error: {_e}\n")
    raise SystemExit(2) from None

OWNER_PASSWORD = os.environ.get("A2ACONSOLE_OWNER_PASSWORD") or None
PUBLIC_URL = PUBLIC_SITE.url

# Behind HTTPS (a2aconsole.public_site): CSRF_TRUSTED_ORIGINS, SESSION_/CSRF_COOKIE_SECURE, SECURE_PROXY_SSL_HEADER,
# SECURE_SSL_REDIRECT (+ _EXEMPT), SECURE_HSTS_SECONDS / _INCLUDE_SUBDOMAINS / _PRELOAD, and axes' client address.
globals().update(PUBLIC_SITE.django_settings(A2A_CLIENT.push_base_url))
# `check --deploy` asks for the HSTS preload flag. It stays off unless A2ACONSOLE_HSTS_PRELOAD=true: with it in the
# header anyone may submit the domain, and every name under it, to the browsers' preload lists, which is the
# domain owner's decision and slow to undo.
SILENCED_SYSTEM_CHECKS = [] if PUBLIC_SITE.hsts_preload else ["security.W021"]

INSTALLED_APPS = [
    "daphne",
    "a2aconsole.web",  # before channels: its runworker restores the watches at start
    "django.contrib.auth",
    "axes",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "csp",
    "django_htmx",
    "template_partials",
    "a2aconsole.api",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "a2aconsole.web.content_policy.StaticOnlyPolicy",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "axes.middleware.AxesMiddleware",  # last: turns a locked-out login into the lockout page
]

# Content-Security-Policy (django-csp 4): only the console's own files run or style a page, so a script an
# agent manages to inject into one cannot run. script-src and style-src are narrowed to the static folder at
# the request's origin (web/content_policy.py), so a file an agent sent cannot be loaded as either. No inline
# script, style attribute or hx-on in any template (tests/web/test_csp.py checks); htmx's eval and injected
# indicator style are off (layout.html).
# 'self' in connect-src covers the same host's ws:// and wss:// (CSP Level 3; every current browser).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [NONE],  # pages: the static folder (web/content_policy.py); probes and the API: nothing
        "style-src": [NONE],
        "img-src": [SELF],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    }
}

ROOT_URLCONF = "a2aconsole.urls"
ASGI_APPLICATION = "a2aconsole.asgi.application"
WSGI_APPLICATION = None

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "a2aconsole.web.unread.context",
            ],
        },
    },
]

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 10}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

# Login throttling (django-axes): A2ACONSOLE_LOGIN_FAILURE_LIMIT wrong passwords for one user from one address lock
# that pair out for A2ACONSOLE_LOGIN_COOLOFF, counted from the last failure; other addresses and users are not
# locked, and `manage.py axes_reset` unlocks everyone. The client address is the peer's, or the proxy's
# X-Forwarded-For with A2ACONSOLE_TRUST_PROXY (AXES_IPWARE_* come from a2aconsole.public_site).
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",  # refuses a locked-out pair before the password is checked
    "django.contrib.auth.backends.ModelBackend",
]
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True  # a good password clears that pair's failures
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False  # tries while locked (even right ones) do not extend it
AXES_LOCKOUT_CALLABLE = "a2aconsole.web.views.auth.locked_out"
AXES_ENABLE_ADMIN = False  # no admin site

LOGIN_URL = "/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/login/"
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_SAMESITE = "Lax"
SESSION_COOKIE_SAMESITE = "Lax"

# Live tabs (a2aconsole.web.live.consumer): at most one render per tab per LIVE_FLUSH_SECONDS (a burst of pushes is
# coalesced), and every LIVE_CHECK_SECONDS a tab joins its groups again and renders in full if it missed an event.
LIVE_FLUSH_SECONDS = 0.25
LIVE_CHECK_SECONDS = 5.0

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = DATA_DIR / "static"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "filters": {
        "client_error_line": {"()": "a2aconsole.web.request_log.ClientErrorLine"},
        # on every handler: a URL's user info and query (keys), and a Bot API token, never reach a log line
        "mask_urls": {"()": "a2aconsole.core.remote.log_masking.MaskUrls"},
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain", "filters": ["mask_urls"]}},
    "root": {"handlers": ["console"], "level": "WARNING"},
    "loggers": {
        "a2aconsole": {"level": "INFO"},
        # Django's own handlers (console when DEBUG, mail_admins, runserver's) carry no mask: its records go to ours
        "django": {"handlers": [], "level": "INFO"},
        # at DEBUG this logger writes whole page contexts (a token shown once among them): never below INFO
        "django.template": {"level": "INFO"},
        # a client's mistake (a foreign Host header, a path outside the static folder): one line, no traceback
        **{name: {"filters": ["client_error_line"]} for name in CLIENT_ERROR_LOGGERS},
    },
}

# Operations (docs/operations.md): who may read /metrics, and the probes that answer before anything else.
try:
    A2A_METRICS = load_metrics_access(os.environ)
    A2A_METRICS_LISTEN = load_metrics_listen(os.environ)  # a worker's metrics port
except ConfigError as _e:
    sys.stderr.write(f"a2aconsole: configuration error: {_e}\n")
    raise SystemExit(2) from None
MIDDLEWARE.insert(0, "a2aconsole.web.probes.probe_middleware")  # /healthz, /readyz, /metrics: before host checks
