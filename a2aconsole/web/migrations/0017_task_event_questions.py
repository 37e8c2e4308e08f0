"""The open questions (`history.open_questions`, every page's Questions badge) read from a partial index of the
questions: with a million tasks in the history, scanning the events by time for them took seconds a page."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('web', '0016_task_record_fts'),
    ]

    operations = [
        migrations.AddIndex(
            model_name='taskevent',
            index=models.Index(condition=models.Q(('kind', 'question')), fields=['created_at', 'id'], name='task_event_questions'),
        ),
    ]
