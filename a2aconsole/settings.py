"""Django settings, from the environment. A bad value stops start-up with one line naming the variable."""

from __future__ import annotations

import os
import secrets
import sys
from pathlib import Path

import dj_database_url

from a2aconsole.core.config import ClientSettings, load_client_settings, parse_bool
from a2aconsole.core.errors import ConfigError
from a2aconsole.core.files import atomic_write, lock_for, read_bytes
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
        data_dir.mkdir(parents=True, exist_ok=True)
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


def _database(data_dir: Path) -> dict:
    url = os.environ.get("DATABASE_URL", "")
    if not url:
        return {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": str(data_dir / "db.sqlite3"),
            # one process, many threads and coroutines: wait for the write lock, take it up front, and let readers
            # go on while one writes (WAL)
            "OPTIONS": {"timeout": 20, "transaction_mode": "IMMEDIATE", "init_command": "PRAGMA journal_mode=WAL;"},
        }
    try:
        return dj_database_url.parse(url, conn_max_age=0)  # async views and workers: no persistent connections
    except Exception:
        raise ConfigError(
            f"DATABASE_URL={url.split('@')[-1]!r}: expected a URL like postgres://user@host:5432/db or sqlite:///path"
        ) from None


def _channel_layer() -> dict:
    url = os.environ.get("REDIS_URL", "")
    if not url:
        return {"BACKEND": "channels.layers.InMemoryChannelLayer"}
    if not url.startswith(("redis://", "rediss://", "unix://")):
        raise ConfigError(f"REDIS_URL={url.split('@')[-1]!r}: expected a URL like redis://127.0.0.1:6379/0")
    return {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": {"hosts": [url]}}


def _allowed_hosts() -> list[str]:
    raw = os.environ.get("ALLOWED_HOSTS") or "127.0.0.1,localhost,[::1]"
    hosts = [h.strip() for h in raw.split(",") if h.strip()]
    if not hosts or any(" " in h or "/" in h for h in hosts):  # e.g. ",,"
        raise ConfigError(
            f"ALLOWED_HOSTS={raw!r}: expected host names separated by commas, e.g. console.example,127.0.0.1"
        )
    return hosts


def _watch_worker() -> str:
    """Where the watches run: `embedded` in the serving process, or `external` (`manage.py runworker a2a-watches`)."""
    raw = os.environ.get("A2ACONSOLE_WATCH_WORKER", "")
    mode = raw.strip().lower() or "embedded"
    if mode not in ("embedded", "external"):
        raise ConfigError(f"A2ACONSOLE_WATCH_WORKER={raw!r}: expected embedded or external")
    return mode


try:
    DATA_DIR = Path(os.environ.get("A2ACONSOLE_DATA") or BASE_DIR / "data").resolve()
    if DATA_DIR.exists() and not DATA_DIR.is_dir():
        raise ConfigError(f"A2ACONSOLE_DATA={str(DATA_DIR)!r}: expected a folder, found a file")
    WORKSPACE_DIR = Path(os.environ.get("A2ACONSOLE_WORKSPACE") or BASE_DIR / "workspace").resolve()
    if WORKSPACE_DIR.exists() and not WORKSPACE_DIR.is_dir():
        raise ConfigError(f"A2ACONSOLE_WORKSPACE={str(WORKSPACE_DIR)!r}: expected a folder, found a file")
    A2A_CLIENT: ClientSettings = load_client_settings(os.environ)
    DATABASES = {"default": _database(DATA_DIR)}
    CHANNEL_LAYERS = {"default": _channel_layer()}
    ALLOWED_HOSTS = _allowed_hosts()
    SECRET_KEY = _secret_key(DATA_DIR)
    A2A_WATCH_WORKER = _watch_worker()
    DEBUG = parse_bool("A2ACONSOLE_DEBUG", os.environ.get("A2ACONSOLE_DEBUG") or "false")
except ConfigError as _e:
    sys.stderr.write(f"a2aconsole: configuration error: {_e}\n")
    raise SystemExit(2) from None

OWNER_PASSWORD = os.environ.get("A2ACONSOLE_OWNER_PASSWORD") or None

INSTALLED_APPS = [
    "daphne",
    "a2aconsole.web",  # before channels: its runworker restores the watches at start
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "django_htmx",
    "template_partials",
    "a2aconsole.api",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

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
            ],
        },
    },
]

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 10}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LOGIN_URL = "/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/login/"
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_SAMESITE = "Lax"
SESSION_COOKIE_SAMESITE = "Lax"

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
    "filters": {"client_error_line": {"()": "a2aconsole.web.request_log.ClientErrorLine"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": "WARNING"},
    "loggers": {
        "a2aconsole": {"level": "INFO"},
        # at DEBUG this logger writes whole page contexts (a token shown once among them): never below INFO
        "django.template": {"level": "INFO"},
        # a client's mistake (a foreign Host header, a path outside the static folder): one line, no traceback
        **{name: {"filters": ["client_error_line"]} for name in CLIENT_ERROR_LOGGERS},
    },
}
