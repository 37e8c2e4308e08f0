"""The API tokens join their chat targets in `web` (state only): the table `api_apitoken` and its rows stay as
they are; `api` forgets the model in its own migration (`api.0003_api_token_to_web`)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("web", "0006_inbox_item_unused_fields"),
        ("api", "0002_idempotent_call"),  # the table exists (made by api.0001) before web claims it
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="ApiToken",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID"),
                        ),
                        ("name", models.CharField(blank=True, max_length=200)),
                        ("token_hash", models.CharField(max_length=64, unique=True)),
                        (
                            "prefix",
                            models.CharField(
                                help_text="The token's first characters, to tell tokens apart", max_length=16
                            ),
                        ),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("revoked_at", models.DateTimeField(blank=True, null=True)),
                        ("last_used_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "target",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="api_tokens",
                                to="web.chattarget",
                            ),
                        ),
                    ],
                    options={"db_table": "api_apitoken", "ordering": ["-created_at", "-id"]},
                ),
            ],
            database_operations=[],
        ),
    ]
