from django.db import migrations, models
from django.db.models import Max


def backfill(apps, schema_editor):
    """Each task's latest progress event already in the history becomes its row's progress line."""
    from a2aconsole.web.task_index import progress_line

    task_event, task_record = apps.get_model("web", "TaskEvent"), apps.get_model("web", "TaskRecord")
    latest = task_event.objects.filter(kind="progress").exclude(task_id="").values("agent", "task_id")
    ids = [r["last"] for r in latest.annotate(last=Max("id"))]
    for ev in task_event.objects.filter(id__in=ids).iterator(chunk_size=1000):
        task_record.objects.filter(agent=ev.agent, task_id=ev.task_id).update(
            progress=progress_line(ev.text, ev.data), progress_at=ev.created_at
        )


class Migration(migrations.Migration):
    dependencies = [
        ("web", "0007_api_token"),
    ]

    operations = [
        migrations.AddField(
            model_name="taskrecord",
            name="progress",
            field=models.TextField(
                blank=True,
                help_text="What the agent said last while working: a status message or an artifact (a preview)",
            ),
        ),
        migrations.AddField(
            model_name="taskrecord",
            name="progress_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop),
    ]
