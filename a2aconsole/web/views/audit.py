"""The audit log page: the newest entries first, a page at a time."""

from __future__ import annotations

from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from a2aconsole.web.models import AuditEntry

PER_PAGE = 50


def page(request: HttpRequest) -> HttpResponse:
    entries = Paginator(AuditEntry.objects.all(), PER_PAGE).get_page(request.GET.get("page"))
    return render(request, "web/audit.html", {"nav": "audit", "title": "Audit log", "entries": entries})
