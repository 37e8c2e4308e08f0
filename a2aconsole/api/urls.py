"""The JSON tool API for agent hosts, under /api/v1/."""

from __future__ import annotations

from django.urls import path, re_path

from a2aconsole.api import errors, views

urlpatterns = [
    path("targets/<str:target_id>/tool", views.tool, name="api-tool"),
    path("tool-schema", views.tool_schema, name="api-tool-schema"),
    path("openapi.json", views.openapi, name="api-openapi"),
    re_path(r"^(?P<rest>.*)$", errors.unknown_path),
]
