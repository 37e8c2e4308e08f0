from django.apps import AppConfig


class WebConfig(AppConfig):
    name = "a2aconsole.web"
    label = "web"
    verbose_name = "a2aconsole console"
