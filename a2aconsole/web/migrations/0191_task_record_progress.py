from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("web", "0005_task_record"),
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
    ]
