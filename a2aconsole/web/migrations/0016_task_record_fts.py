"""Free text through the database's own index (`web.task_fts`): on SQLite an FTS5 trigram table over the tasks'
words, kept in step by triggers, filled here; it replaces 0009's covering index (state, agent, words), which a
search read in full. On PostgreSQL 0009's pg_trgm GIN index already serves it (made again here if missing and
the extension can be created)."""

from django.db import DatabaseError, migrations, transaction

OLD_INDEX = "task_record_search_words"


def forwards(apps, schema_editor):
    from a2aconsole.web import task_fts

    if schema_editor.connection.vendor == "sqlite":
        schema_editor.execute(f"DROP INDEX IF EXISTS {OLD_INDEX}")
        task_fts.install(schema_editor)
    elif schema_editor.connection.vendor == "postgresql":
        try:
            with transaction.atomic(using=schema_editor.connection.alias):  # a savepoint: a refusal is no failure
                schema_editor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
                schema_editor.execute(
                    f"CREATE INDEX IF NOT EXISTS {OLD_INDEX} ON web_taskrecord USING gin (search_words gin_trgm_ops)"
                )
        except DatabaseError:  # no right to create the extension: words are matched row by row
            pass


def backwards(apps, schema_editor):
    from a2aconsole.web import task_fts

    if schema_editor.connection.vendor == "sqlite":
        task_fts.uninstall(schema_editor)
        schema_editor.execute(f"CREATE INDEX IF NOT EXISTS {OLD_INDEX} ON web_taskrecord (state, agent, search_words)")


class Migration(migrations.Migration):
    dependencies = [
        ("web", "0015_task_record_page_indexes"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
