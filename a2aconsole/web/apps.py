from django.apps import AppConfig


class WebConfig(AppConfig):
    name = "a2aconsole.web"
    label = "web"
    verbose_name = "a2aconsole console"

    def ready(self) -> None:
        from django.contrib.auth.signals import user_logged_in

        from a2aconsole.web import audit

        user_logged_in.connect(audit.record_login, dispatch_uid="a2aconsole.web.audit.login")
