"""The console's forms. They check what the file layer checks, so an error shows beside its field."""

from __future__ import annotations

from typing import Any

from django import forms

from a2aconsole.core.data_parts import send_data
from a2aconsole.core.errors import ToolError
from a2aconsole.core.files import NAME_MAX_LENGTH, NAME_PATTERN, is_http_url, is_origin, origin
from a2aconsole.core.tool import ARGUMENTS, SEND_NEEDS, Argument


class AgentForm(forms.Form):
    """One `agents.json` entry. `version` is the file's version the form was made from (conflict check).

    The key is write-only: it is never put back into the page. Editing leaves it as it is unless a new
    key is typed or "remove the key" is ticked.
    """

    name = forms.CharField(
        max_length=NAME_MAX_LENGTH,
        help_text=f"1-{NAME_MAX_LENGTH} of a-z, 0-9 and -; what you and your agents call it",
    )
    url = forms.CharField(
        label="URL", max_length=2000, help_text="The agent's base URL, or its card URL ending in .json"
    )
    key = forms.CharField(
        label="Key",
        required=False,
        max_length=2000,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
        help_text="Optional API key; sent only to this agent's own address",
    )
    remove_key = forms.BooleanField(label="Remove the key", required=False)
    description = forms.CharField(
        required=False, max_length=500, help_text="Optional; overrides the description on the agent's card"
    )
    version = forms.CharField(widget=forms.HiddenInput)

    def __init__(self, *args: Any, adding: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if adding:
            del self.fields["remove_key"]

    def clean_name(self) -> str:
        name = self.cleaned_data["name"].strip()
        if not NAME_PATTERN.match(name):
            raise forms.ValidationError(
                f"Use 1-{NAME_MAX_LENGTH} characters of a-z, 0-9 and - (no spaces or capitals)."
            )
        return name

    def clean_url(self) -> str:
        url = self.cleaned_data["url"].strip()
        if not is_http_url(url):
            raise forms.ValidationError("Enter an absolute http:// or https:// address, e.g. https://agent.example/")
        return url

    def apply(self, raw: dict[str, Any]) -> dict[str, Any]:
        """The entry as JSON: `raw` (the entry as stored, unknown fields kept) with the form's changes."""
        d = self.cleaned_data
        out = dict(raw)
        out["name"] = d["name"]
        out["url"] = d["url"]
        if d.get("key"):
            out["key"] = d["key"]
        elif d.get("remove_key"):
            out.pop("key", None)
        if d.get("description"):
            out["description"] = d["description"]
        else:
            out.pop("description", None)
        return out


class RawAgentsForm(forms.Form):
    """The raw editor. `base` is the text the editor opened with (what a conflict merges from); `resolution`
    says which way a conflict page was resolved (keep yours, keep the file's, a merge), empty otherwise."""

    RESOLUTIONS = [("", "save"), ("yours", "keep yours"), ("file", "keep the file's"), ("merge", "save a merge")]

    text = forms.CharField(
        label="agents.json", widget=forms.Textarea(attrs={"class": "raw", "spellcheck": "false"}), required=False
    )
    version = forms.CharField(widget=forms.HiddenInput)
    base = forms.CharField(widget=forms.HiddenInput, required=False, strip=False)
    resolution = forms.ChoiceField(choices=RESOLUTIONS, required=False, widget=forms.HiddenInput)

    def clean_text(self) -> str:
        return str(self.cleaned_data["text"]).replace("\r\n", "\n")  # browsers send CRLF; the file keeps LF

    def clean_base(self) -> str | None:
        base = str(self.cleaned_data.get("base") or "").replace("\r\n", "\n")
        return base or None


class VersionForm(forms.Form):
    version = forms.CharField(widget=forms.HiddenInput)


class OriginForm(VersionForm):
    """Trust or stop trusting one other origin for an agent's calls (the agent page's buttons)."""

    origin = forms.CharField(max_length=300)
    action = forms.ChoiceField(choices=[("trust", "trust"), ("revoke", "revoke")])

    def clean_origin(self) -> str:
        value = self.cleaned_data["origin"]
        if not is_origin(value):
            raise forms.ValidationError("an origin is a scheme, host and port, such as https://host:8443")
        return origin(value)


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """Several files in one field (Django's documented recipe), at most `max_count` of them."""

    def __init__(self, *args: Any, max_count: int, **kwargs: Any) -> None:
        kwargs.setdefault("widget", MultipleFileInput())
        super().__init__(*args, **kwargs)
        self.max_count = max_count

    def clean(self, data: Any, initial: Any = None) -> Any:
        single = super().clean
        if isinstance(data, list | tuple):
            if len(data) > self.max_count:
                raise forms.ValidationError(f"Attach at most {self.max_count} files (you chose {len(data)}).")
            return [single(d, initial) for d in data]
        return [single(data, initial)] if data else []


def send_field(arg: Argument) -> forms.Field:
    """The send form's field for one of the tool's arguments: its words, limits and need from the contract."""
    common: dict[str, Any] = {"label": arg.label, "help_text": arg.help, "required": "send" in arg.needed_by}
    if arg.is_list:  # uploads: stored in the workspace, then sent as their workspace paths
        return MultipleFileField(max_count=arg.max_items, **common)
    if arg.name == "agent":  # picked from the chat's agents.json (the choices are set per form)
        return forms.ChoiceField(choices=(), **common)
    if arg.is_object:  # a JSON object (a filled form's values: `web.data_forms` makes it from the form)
        return forms.JSONField(max_length=arg.max_length, **common)
    widget = forms.Textarea(attrs={"rows": 4}) if arg.name == "message" else None
    return forms.CharField(max_length=arg.max_length, widget=widget, **common)


class SendForm(forms.Form):
    """A message to an agent: new, continuing a context, or answering a task. One field per argument of the
    tool (`ARGUMENTS`), named in snake case (`contextId` -> `context_id`); see `send_field`."""

    def __init__(self, *args: Any, agents: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["agent"].choices = [(a, a) for a in agents]

    def clean(self) -> dict[str, Any]:
        """The tool's rule: a send carries a message, files or data (a JSON object)."""
        data = super().clean()
        if data.get("data") is not None:
            try:
                send_data(data["data"])
            except ToolError as e:
                self.add_error("data", str(e))
        if not (data.get("message") or "").strip() and not data.get("files") and data.get("data") is None:
            self.add_error("message", SEND_NEEDS)
        return data

    def tool_args(self, files: list[str]) -> dict[str, Any]:
        """The valid form as the tool's `send` arguments, blanks left out; `files` are the uploads' workspace
        paths (the uploads saved first)."""
        values = {**self.cleaned_data, "files": files}
        return {a.name: values[a.field] for a in ARGUMENTS if _given(a, values.get(a.field))}


def _given(arg: Argument, value: Any) -> bool:
    """Whether a form value is sent: a blank is left out, but an object is sent even empty (`{}` says "none")."""
    return value is not None if arg.is_object else bool(value)


SendForm.base_fields = {a.field: send_field(a) for a in ARGUMENTS}
