"""API tokens: how an agent host proves it speaks for one chat target.

Only a SHA-256 of each token is stored; the token itself is shown once, when it is made. A token is
bound to one target, so a host holding it can only use that target's workspace and hops.
"""

from __future__ import annotations

import hashlib
import secrets

from django.db import models
from django.utils import timezone

from a2aconsole.web.models import ChatTarget

TOKEN_PREFIX = "a2ac_"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class ApiToken(models.Model):
    """A bearer token for `POST /api/v1/targets/<id>/tool`. Revoked tokens are kept for the record."""

    target = models.ForeignKey(ChatTarget, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=200, blank=True)
    token_hash = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=16, help_text="The token's first characters, to tell tokens apart")
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.target_id})"

    @property
    def active(self) -> bool:
        return self.revoked_at is None

    @classmethod
    def issue(cls, target: ChatTarget, name: str = "") -> tuple[ApiToken, str]:
        """A new token for `target`: the row, and the token itself (shown once, never stored)."""
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        row = cls.objects.create(target=target, name=name, token_hash=hash_token(token), prefix=token[:12])
        return row, token

    def revoke(self) -> None:
        if self.revoked_at is None:
            self.revoked_at = timezone.now()
            self.save(update_fields=["revoked_at"])


class IdempotentCall(models.Model):
    """A tool call made with an `Idempotency-Key`: the key, the body's hash and, once answered, the answer's
    exact bytes, so a host that retries (say after a dropped connection) gets the first answer, not a second send.

    Keyed by the token that made it (a token belongs to one target). Rows older than 24 h are deleted
    lazily, by the next keyed call (`api/idempotency.py`).
    """

    token = models.ForeignKey(ApiToken, on_delete=models.CASCADE, related_name="idempotent_calls")
    key = models.CharField(max_length=255)
    body_hash = models.CharField(max_length=64, help_text="SHA-256 of the call's body, as canonical JSON")
    status = models.PositiveSmallIntegerField(null=True, blank=True, help_text="None while the call is in flight")
    answer = models.BinaryField(null=True, blank=True, help_text="The answer's body exactly as it was sent")
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["token", "key"], name="api_one_call_per_token_and_key")]

    def __str__(self) -> str:
        return f"{self.key} ({self.token_id})"
