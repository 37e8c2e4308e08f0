"""The push receiver: POST /a2a/push/<watchId>. (Filled in by the watches work.)"""

from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt


@csrf_exempt
def receive(request: HttpRequest, watch_id: str) -> HttpResponse:
    return HttpResponse(status=404)
