from django.apps import AppConfig


class ApiConfig(AppConfig):
    name = "a2aconsole.api"
    label = "api"
    verbose_name = "a2aconsole agent-host API"

    def ready(self) -> None:
        from a2aconsole.api import tokens  # it imports models: not before the app registry is ready

        tokens.connect()  # a token or a target changed in this process: the kept tokens are forgotten at once
