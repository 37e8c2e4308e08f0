from django.apps import AppConfig

from a2aconsole.data_folder import private_sqlite_files


class WebConfig(AppConfig):
    name = "a2aconsole.web"
    label = "web"
    verbose_name = "a2aconsole console"

    def ready(self) -> None:
        from django.contrib.auth.signals import user_logged_in
        from django.db.backends.signals import connection_created
        from django.db.models.signals import post_migrate

        # In ready(): these import models, which cannot be imported before the app registry is loaded. Every
        # page's live part registers itself with web.live when its view module is imported: here, so every
        # process (the server, the worker, tests) has them all.
        from a2aconsole.web import audit, task_fts
        from a2aconsole.web.views import (  # noqa: F401
            agent_cards,
            conversation,
            dashboard,
            inbox,
            status,
            task_live,
            tasklist,
            watches_live,
        )

        # SQLite creates its files 0644: each new connection makes them 0600 (see a2aconsole.data_folder)
        connection_created.connect(private_sqlite_files, dispatch_uid="a2aconsole-private-sqlite-files")
        user_logged_in.connect(audit.record_login, dispatch_uid="a2aconsole.web.audit.login")
        # the SQLite free-text index is no model: made again wherever a migrate left it missing (`task_fts.ensure`)
        post_migrate.connect(task_fts.ensure, sender=self, dispatch_uid="a2aconsole.web.task_fts.ensure")
