"""`TaskRecord.search_words`: what the Tasks page's free text searches, each word of a task's ids and texts once
(`task_index.search_words`), so a search of 10,000 tasks reads a fraction of their text. Filled for the rows
already there, and indexed: on SQLite with state and agent (a search, alone or with those filters, reads that
index instead of the wide rows), on PostgreSQL with pg_trgm, when the extension can be created."""

from django.db import DatabaseError, migrations, models, transaction

INDEX = "task_record_search_words"


def backfill(apps, schema_editor):
    from a2aconsole.web.task_index import search_words

    task_record = apps.get_model("web", "TaskRecord")
    batch = []
    for record in task_record.objects.all().iterator(chunk_size=1000):
        record.search_words = search_words(record)
        batch.append(record)
        if len(batch) == 1000:
            task_record.objects.bulk_update(batch, ["search_words"])
            batch = []
    task_record.objects.bulk_update(batch, ["search_words"])


def search_index(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        # covering: free text, alone or with state: and agent:, is counted from this index, not the wide rows
        schema_editor.execute(f"CREATE INDEX IF NOT EXISTS {INDEX} ON web_taskrecord (state, agent, search_words)")
    if schema_editor.connection.vendor != "postgresql":  # (a btree there refuses entries over ~2.7 KB)
        return
    try:
        with transaction.atomic(using=schema_editor.connection.alias):  # a savepoint: a refusal is no failure
            schema_editor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
            schema_editor.execute(
                f"CREATE INDEX IF NOT EXISTS {INDEX} ON web_taskrecord USING gin (search_words gin_trgm_ops)"
            )
    except DatabaseError:  # no right to create the extension: a search reads every row's words
        pass


def drop_search_index(apps, schema_editor):
    if schema_editor.connection.vendor in ("sqlite", "postgresql"):
        schema_editor.execute(f"DROP INDEX IF EXISTS {INDEX}")


class Migration(migrations.Migration):
    dependencies = [
        ("web", "0008_task_record_progress"),
    ]

    operations = [
        migrations.AddField(
            model_name="taskrecord",
            name="search_words",
            field=models.TextField(
                blank=True,
                default="",
                help_text="What free text searches: each word of the ids and texts once, lower case",
            ),
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop),
        migrations.RunPython(search_index, drop_search_index),
    ]
