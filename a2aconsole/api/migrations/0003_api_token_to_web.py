"""`ApiToken` now belongs to `web` (see `web.0007_api_token`): state only, no table or row changes."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("api", "0002_idempotent_call"),
        ("web", "0007_api_token"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="idempotentcall",
                    name="token",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="idempotent_calls",
                        to="web.apitoken",
                    ),
                ),
                migrations.DeleteModel(name="ApiToken"),
            ],
            database_operations=[],
        ),
    ]
