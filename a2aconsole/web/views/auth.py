"""Logging in and out (throttled by django-axes), changing the password, and the first-run page that creates the
owner account from a one-time link."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_not_required
from django.contrib.auth.forms import AuthenticationForm, PasswordChangeForm, UserCreationForm
from django.contrib.auth.views import LoginView, LogoutView, PasswordChangeView
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse_lazy

from a2aconsole.web import audit, owner


class ConsoleLoginView(LoginView):
    """Django's login, telling a first-run visitor where the set-up link is."""

    redirect_authenticated_user = True

    def get_context_data(self, **kwargs: object) -> dict[str, object]:
        return {**super().get_context_data(**kwargs), "owner_missing": not owner.owner_exists()}


login_view = ConsoleLoginView.as_view()
logout_view = LogoutView.as_view()


def _duration(seconds: int) -> str:
    for unit, size in (("hour", 3600), ("minute", 60)):
        if seconds >= size and seconds % size == 0:
            n = seconds // size
            return f"{n} {unit}{'s' if n != 1 else ''}"
    return f"{seconds} second{'s' if seconds != 1 else ''}"


def locked_out(request: HttpRequest, *_: object) -> HttpResponse:
    """axes' answer to a login it refused (AXES_LOCKOUT_CALLABLE): the login page again, saying why and for how long.

    axes passes (request, response, credentials) on the sync path but (request, credentials) on the async one,
    so nothing but the request is used.
    """
    seconds = int(settings.AXES_COOLOFF_TIME.total_seconds())
    form = AuthenticationForm(request, initial={"username": request.POST.get("username", "")})
    context = {"form": form, "locked_for": _duration(seconds), "next": request.POST.get("next", "")}
    response = render(request, "registration/login.html", context, status=429)
    response["Retry-After"] = str(seconds)
    return response


class ConsolePasswordChangeView(PasswordChangeView):
    """Django's password change in the console's layout: the configured validators apply, and this session
    stays logged in (Django's view updates its hash) while every other session of the account ends."""

    template_name = "web/password.html"
    success_url = reverse_lazy("dashboard")
    extra_context = {"nav": "password", "title": "Change the password"}

    def form_valid(self, form: PasswordChangeForm) -> HttpResponse:
        response = super().form_valid(form)
        audit.record(self.request, "password-changed")
        messages.success(self.request, "Password changed. Other browsers logged in to this account are logged out.")
        return response


password_change = ConsolePasswordChangeView.as_view()


@login_not_required
def setup(request: HttpRequest, token: str) -> HttpResponse:
    """Create the owner account. The link works until the owner exists; after that it is a 404."""
    if owner.owner_exists() or not owner.setup_token_valid(token):
        raise Http404("no set-up pending")
    form = UserCreationForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        with owner.setup_lock():
            if owner.owner_exists() or not owner.setup_token_valid(token):
                raise Http404("no set-up pending")
            user = form.save(commit=False)
            user.is_superuser = user.is_staff = True
            user.save()
            owner.discard_setup_token()
        audit.record(request, "owner-created", user.get_username(), user=user)
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return redirect("dashboard")
    return render(request, "web/setup.html", {"form": form})
