"""What the API keeps of its calls: the answers of calls made with an `Idempotency-Key`.

The tokens hosts call with belong to their chat targets and live beside them (`web.models.ApiToken`).
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from a2aconsole.web.models import ApiToken


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
