"""Logging in and out and changing the password (both throttled by django-axes), and the first-run page that
creates the owner account from a one-time link."""

from __future__ import annotations

from axes.helpers import get_client_ip_address
from axes.utils import reset as reset_failures
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import authenticate, login
from django.contrib.auth.decorators import login_not_required
from django.contrib.auth.forms import AuthenticationForm, PasswordChangeForm, UserCreationForm
from django.contrib.auth.views import LoginView, LogoutView, PasswordChangeView
from django.core.exceptions import ValidationError
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
    """axes' answer to a login or password change it refused (AXES_LOCKOUT_CALLABLE): the same page again, saying
    why and for how long.

    axes passes (request, response, credentials) on the sync path but (request, credentials) on the async one,
    so nothing but the request is used.
    """
    seconds = int(settings.AXES_COOLOFF_TIME.total_seconds())
    if request.resolver_match is not None and request.resolver_match.url_name == "password-change":
        template = "web/password.html"
        context = {**PASSWORD_PAGE, "form": ThrottledPasswordChangeForm(request.user)}
    else:
        template = "registration/login.html"
        form = AuthenticationForm(request, initial={"username": request.POST.get("username", "")})
        context = {"form": form, "next": request.POST.get("next", "")}
    response = render(request, template, {**context, "locked_for": _duration(seconds)}, status=429)
    response["Retry-After"] = str(seconds)
    return response


PASSWORD_PAGE = {"nav": "password", "title": "Change the password"}


class ThrottledPasswordChangeForm(PasswordChangeForm):
    """The old password is checked by `authenticate`, so a wrong one counts as a failed log-in of this account from
    this address (django-axes) and a locked pair is refused: a logged-in tab left open cannot guess without limit."""

    def __init__(self, user: object, *args: object, request: HttpRequest | None = None, **kwargs: object) -> None:
        super().__init__(user, *args, **kwargs)
        self.request = request

    def clean_old_password(self) -> str:
        old = self.cleaned_data["old_password"]
        checked = authenticate(self.request, username=self.user.get_username(), password=old)
        if checked is None or checked.pk != self.user.pk:
            raise ValidationError(self.error_messages["password_incorrect"], code="password_incorrect")
        return old


class ConsolePasswordChangeView(PasswordChangeView):
    """Django's password change in the console's layout: the configured validators apply, and this session
    stays logged in (Django's view updates its hash) while every other session of the account ends."""

    template_name = "web/password.html"
    form_class = ThrottledPasswordChangeForm
    success_url = reverse_lazy("dashboard")
    extra_context = PASSWORD_PAGE

    def get_form_kwargs(self) -> dict[str, object]:
        return {**super().get_form_kwargs(), "request": self.request}

    def form_valid(self, form: PasswordChangeForm) -> HttpResponse:
        response = super().form_valid(form)
        # a right old password clears this address's failures, as a good log-in does
        if address := get_client_ip_address(self.request):
            reset_failures(ip=address, username=self.request.user.get_username())
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
