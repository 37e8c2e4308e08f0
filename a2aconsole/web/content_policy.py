"""The Content-Security-Policy of the console's answers: settings.CONTENT_SECURITY_POLICY, with scripts and
styles allowed from the console's static folder only.

`'self'` would also let a page run a file an agent sent (`/files/...`) as a script or a style sheet; CSP can
narrow a source to a path only with a host in front, so the static folder is named at the origin the browser
used for this request. A download carries a policy of its own (`sandbox; default-src 'none'`, set by the
view), which the middleware leaves in place.
"""

from __future__ import annotations

from csp.constants import NONE
from csp.middleware import CSPMiddleware, PolicyParts
from django.conf import settings
from django.core.exceptions import DisallowedHost
from django.http import HttpRequest, HttpResponseBase


def static_source(request: HttpRequest) -> str:
    """`https://console.example/static/`: the static folder at the request's own origin ('none' for a request
    to a host that is not allowed, whose answer is a bare error page)."""
    try:
        return request.build_absolute_uri(settings.STATIC_URL)
    except DisallowedHost:
        return NONE


class StaticOnlyPolicy(CSPMiddleware):
    """django-csp's middleware, with `script-src` and `style-src` replaced by the static folder's URL."""

    def get_policy_parts(
        self, request: HttpRequest, response: HttpResponseBase, report_only: bool = False
    ) -> PolicyParts:
        parts = super().get_policy_parts(request, response, report_only)
        if not report_only and parts.config is None:
            static = [static_source(request)]
            parts.replace = {"script-src": static, "style-src": static, **(parts.replace or {})}
        return parts
