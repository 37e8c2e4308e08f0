"""Indexes for every filter and sort of the Tasks page, so a page of a million tasks reads a range of one index
(`views.tasklist`): each sort is (column, started_at, id) or (column, id), each filter leads an index, `state:`
has one per sort, duration has a partial index for the finished (by `run_seconds`) and one for the running. The
single-column indexes these supersede are dropped by name, without rebuilding the table (SQLite rebuilds it
to change a field)."""

from django.db import migrations, models

SUPERSEDED = {  # the indexes `db_index=True` gave these fields (PostgreSQL adds a `_like` one to a varchar's)
    "started_at": "web_taskrecord_started_at_7bc249cf",
    "updated_at": "web_taskrecord_updated_at_d72df762",
    "state": "web_taskrecord_state_598f6c10",
    "target": "web_taskrecord_target_ff6d8f34",
}
DROP = [f'DROP INDEX IF EXISTS "{name}{like}"' for name in SUPERSEDED.values() for like in ("", "_like")]
RECREATE = [f'CREATE INDEX IF NOT EXISTS "{name}" ON "web_taskrecord" ("{col}")' for col, name in SUPERSEDED.items()]


class Migration(migrations.Migration):
    dependencies = [
        ("web", "0014_outgoing_data"),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name="taskrecord",
            name="task_record_agent_started",
        ),
        migrations.RemoveIndex(
            model_name="taskrecord",
            name="task_record_duration",
        ),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="taskrecord",
                    name="started_at",
                    field=models.DateTimeField(),
                ),
                migrations.AlterField(
                    model_name="taskrecord",
                    name="state",
                    field=models.CharField(blank=True, max_length=40),
                ),
                migrations.AlterField(
                    model_name="taskrecord",
                    name="target",
                    field=models.CharField(blank=True, max_length=64),
                ),
                migrations.AlterField(
                    model_name="taskrecord",
                    name="updated_at",
                    field=models.DateTimeField(),
                ),
            ],
            database_operations=[migrations.RunSQL(DROP, RECREATE)],
        ),
        migrations.AddIndex(
            model_name="taskrecord",
            index=models.Index(fields=["started_at", "id"], name="task_record_started"),
        ),
        migrations.AddIndex(
            model_name="taskrecord",
            index=models.Index(fields=["updated_at", "id"], name="task_record_updated"),
        ),
        migrations.AddIndex(
            model_name="taskrecord",
            index=models.Index(fields=["agent", "started_at", "id"], name="task_record_agent_started"),
        ),
        migrations.AddIndex(
            model_name="taskrecord",
            index=models.Index(fields=["target", "started_at", "id"], name="task_record_target_started"),
        ),
        migrations.AddIndex(
            model_name="taskrecord",
            index=models.Index(fields=["state", "started_at", "id"], name="task_record_state_started"),
        ),
        migrations.AddIndex(
            model_name="taskrecord",
            index=models.Index(fields=["source", "started_at", "id"], name="task_record_source_started"),
        ),
        migrations.AddIndex(
            model_name="taskrecord",
            index=models.Index(fields=["state", "updated_at", "id"], name="task_record_state_updated"),
        ),
        migrations.AddIndex(
            model_name="taskrecord",
            index=models.Index(fields=["state", "agent", "started_at", "id"], name="task_record_state_agent"),
        ),
        migrations.AddIndex(
            model_name="taskrecord",
            index=models.Index(fields=["state", "target", "started_at", "id"], name="task_record_state_target"),
        ),
        migrations.AddIndex(
            model_name="taskrecord",
            index=models.Index(
                condition=models.Q(("run_seconds__isnull", False)),
                fields=["run_seconds", "id"],
                name="task_record_duration",
            ),
        ),
        migrations.AddIndex(
            model_name="taskrecord",
            index=models.Index(
                condition=models.Q(("run_seconds__isnull", True)),
                fields=["started_at", "id"],
                name="task_record_running",
            ),
        ),
    ]
