"""The API tokens moved from the `api` app to `web` (beside their chat targets) by state-only migrations: a
database made before keeps its tokens, and the idempotent calls that point at them."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations import CreateModel, SeparateDatabaseAndState
from django.db.migrations.executor import MigrationExecutor

from a2aconsole.api.models import IdempotentCall
from a2aconsole.web.models import ApiToken, hash_token

pytestmark = pytest.mark.django_db(transaction=True)


def the_move(executor: MigrationExecutor) -> tuple[str, str]:
    """The web migration that takes the model over (found by what it does: its number may change)."""
    for key, migration in executor.loader.disk_migrations.items():
        states = [
            s for op in migration.operations if isinstance(op, SeparateDatabaseAndState) for s in op.state_operations
        ]
        if key[0] == "web" and any(isinstance(s, CreateModel) and s.name == "ApiToken" for s in states):
            return key
    raise AssertionError("no web migration takes ApiToken over")


def test_tokens_and_their_calls_survive_the_move() -> None:
    executor = MigrationExecutor(connection)
    before = [parent.key for parent in executor.loader.graph.node_map[the_move(executor)].parents]
    executor.migrate(before)
    old = executor.loader.project_state(before).apps
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
