"""The API tokens moved from the `api` app to `web` (beside their chat targets) by state-only migrations: a
database made before keeps its tokens, and the idempotent calls that point at them."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from a2aconsole.api.models import IdempotentCall
from a2aconsole.web.models import ApiToken, hash_token

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("web", "0005_task_record"), ("api", "0002_idempotent_call")]


def test_tokens_and_their_calls_survive_the_move() -> None:
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    target = old.get_model("web", "ChatTarget").objects.create(id="host", name="Host", workspace="/srv/ws")
    token = old.get_model("api", "ApiToken").objects.create(target=target, token_hash=hash_token("t"), prefix="a2ac_t")
    old.get_model("api", "IdempotentCall").objects.create(token=token, key="k1", body_hash="b" * 64)

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    moved = ApiToken.objects.get()
    assert (moved.pk, moved.target_id, moved.token_hash, moved.prefix) == (token.pk, "host", hash_token("t"), "a2ac_t")
    call = IdempotentCall.objects.select_related("token").get()
    assert call.token == moved and call.key == "k1"
    assert [t.pk for t in moved.target.api_tokens.all()] == [moved.pk]
