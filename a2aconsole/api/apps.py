from django.apps import AppConfig


class ApiConfig(AppConfig):
    name = "a2aconsole.api"
    label = "api"
    verbose_name = "a2aconsole agent-host API"
