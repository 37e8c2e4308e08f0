"""The owner account: the one login of the console, created on first run.

There is no default password. Either `A2ACONSOLE_OWNER_PASSWORD` creates the owner unattended, or
`manage.py serve` issues a one-time setup token: only its hash is kept (in the data folder), and it is
gone once the owner exists, so a leaked log line is useless after set-up.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import secrets
from collections.abc import Iterator
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.contrib.auth.password_validation import validate_password

from a2aconsole.core.files import atomic_write, lock_for, read_bytes

OWNER_USERNAME = "owner"


def owner_exists() -> bool:
    return get_user_model().objects.filter(is_superuser=True, is_active=True).exists()


def create_owner(username: str, password: str) -> AbstractBaseUser:
    """Create the owner (a superuser); the password must pass the configured validators."""
    user_model = get_user_model()
    validate_password(password, user_model(username=username))
    user = user_model.objects.create_superuser(username=username, password=password)
    discard_setup_token()
    return user


def _token_path() -> Path:
    return Path(settings.DATA_DIR) / "setup_token"


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).hexdigest().encode()


def issue_setup_token() -> str:
    """A fresh one-time token; any earlier one stops working."""
    token = secrets.token_urlsafe(32)
    with setup_lock():
        atomic_write(_token_path(), _digest(token))
    return token


def setup_token_valid(token: str) -> bool:
    stored = read_bytes(_token_path())
    return stored is not None and hmac.compare_digest(stored.strip(), _digest(token))


def discard_setup_token() -> None:
    with contextlib.suppress(FileNotFoundError):
        _token_path().unlink()


@contextlib.contextmanager
def setup_lock() -> Iterator[None]:
    """Serialises set-up across requests and processes, so two visitors can't both create an owner."""
    with lock_for(Path(settings.DATA_DIR) / ".setup.lock").hold():
        yield
