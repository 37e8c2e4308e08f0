"""One argument contract (`core.tool_schema.ARGUMENTS`): the tool schema, the API's checks, openapi.json, the
console's send form and the shell's options all say the same names, words and limits, because all come from it."""

from __future__ import annotations

import argparse
import dataclasses
import io

import pytest
from django import forms
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError

from a2aconsole.api.calls import NEEDS, BadCall, _member, call_schema, parse_call
from a2aconsole.api.openapi import TOOL_PATH, openapi_document, tool_definition
from a2aconsole.core.data_parts import send_data
from a2aconsole.core.errors import ToolError
from a2aconsole.core.tool.schema import (
    ACTIONS,
    ARGUMENT,
    ARGUMENTS,
    MAX_FILES,
    MAX_MESSAGE,
    MAX_REF,
    SEND_NEEDS,
    TARGET_HELP,
    TOOL_SCHEMA,
    Argument,
)
from a2aconsole.web.forms import MultipleFileField, SendForm, send_field
from a2aconsole.web.management.commands import a2a, a2a_status

TOOL_PROPS = TOOL_SCHEMA["parameters"]["properties"]


def cli_options(command: type) -> dict[str, argparse.Action]:
    parser = command().create_parser("manage.py", command.__module__.rsplit(".", 1)[-1])
    return {action.dest: action for action in parser._actions}


def test_the_tool_schema_is_the_contract_with_its_limits() -> None:
    assert list(TOOL_PROPS) == ["action", *ARGUMENT]
    assert TOOL_PROPS["action"]["enum"] == list(ACTIONS)
    for arg in ARGUMENTS:
        spec = TOOL_PROPS[arg.name]
        assert spec["description"] == arg.description
        if arg.is_list:
            assert (spec["maxItems"], spec["items"]["maxLength"]) == (arg.max_items, arg.max_length)
        elif arg.is_object:  # a schema caps no object's size as JSON: the description says it
            assert spec == {"type": "object", "description": arg.description}
            assert f"at most {arg.max_length:,} bytes as JSON" in arg.description
        else:
            assert spec["maxLength"] == arg.max_length
    assert (ARGUMENT["message"].max_length, ARGUMENT["files"].max_items) == (MAX_MESSAGE, MAX_FILES)


def test_the_api_body_and_openapi_request_are_the_tool_schema_plus_hops() -> None:
    body = call_schema()
    assert {k: v for k, v in body["properties"].items() if k != "hops"} == TOOL_PROPS
    assert body["additionalProperties"] is False
    task = ("agent", "taskId")
    needs = {"agents": (), "send": ("agent",), "status": task, "cancel": task, "unwatch": task}
    assert needs == NEEDS
    doc = openapi_document("http://console.example")
    assert doc["components"]["schemas"]["ToolCall"] == body
    assert tool_definition() is TOOL_SCHEMA
    [target] = [p for p in doc["paths"][TOOL_PATH]["post"]["parameters"] if p["name"] == "targetId"]
    assert target["description"] == TARGET_HELP


def test_every_argument_is_a_send_form_field_with_its_words_and_limits() -> None:
    """Before: the form capped a message at 100,000 characters, the API at 1,000,000, and took any number of files."""
    fields = SendForm(agents=["echo"]).fields
    assert list(fields) == [a.field for a in ARGUMENTS]
    assert [a.field for a in ARGUMENTS] == ["agent", "message", "context_id", "task_id", "files", "data"]
    for arg in ARGUMENTS:
        field = fields[arg.field]
        assert (field.label, field.help_text, field.required) == (arg.label, arg.help, "send" in arg.needed_by)
        if arg.is_list:
            assert isinstance(field, MultipleFileField) and field.max_count == arg.max_items
        elif arg.name == "agent":  # a pick among the chat's agents: bounded by agents.json's names
            assert isinstance(field, forms.ChoiceField) and field.choices == [("echo", "echo")]
        elif arg.is_object:
            assert isinstance(field, forms.JSONField) and field.max_length == arg.max_length
        else:
            assert isinstance(field, forms.CharField) and field.max_length == arg.max_length
            assert field.widget.attrs["maxlength"] == str(arg.max_length)


def test_the_send_form_refuses_what_the_contract_refuses_and_sends_under_the_contract_names() -> None:
    def form(**data: object) -> SendForm:
        files = data.pop("files", [])
        return SendForm({"agent": "echo", **data}, {"files": files} if files else {}, agents=["echo"])

    over = form(message="m" * (MAX_MESSAGE + 1))
    assert not over.is_valid() and "message" in over.errors
    assert not form(message="hi", task_id="t" * (MAX_REF + 1)).is_valid()
    many = form(files=[SimpleUploadedFile(f"f{i}.txt", b"x") for i in range(MAX_FILES + 1)])
    assert not many.is_valid() and f"at most {MAX_FILES} files" in str(many.errors["files"])
    empty = form(message="  ")
    assert not empty.is_valid() and empty.errors["message"] == [SEND_NEEDS]

    ok = form(message="m" * MAX_MESSAGE, context_id=" c-1 ", task_id="")
    assert ok.is_valid(), ok.errors
    assert ok.tool_args(["uploads/x/a.txt"]) == {
        "agent": "echo",
        "message": "m" * MAX_MESSAGE,
        "contextId": "c-1",
        "files": ["uploads/x/a.txt"],
    }


def test_every_argument_is_a_cli_option_with_its_description_and_limit() -> None:
    options = cli_options(a2a.Command)
    assert options["action"].choices == ACTIONS and options["action"].help == TOOL_PROPS["action"]["description"]
    for arg in ARGUMENTS:
        option = options[arg.name]
        assert tuple(option.option_strings) == arg.flags
        assert option.help is not None and option.help.startswith(arg.description)
        if arg.is_object:  # JSON text of an object, its length capped
            assert option.type('{"a": [1]}') == {"a": [1]}
            for bad in ("[1]", "{nope", '{"x": "' + "x" * arg.max_length + '"}'):
                with pytest.raises(argparse.ArgumentTypeError):
                    option.type(bad)
            continue
        assert option.type("x" * arg.max_length) == "x" * arg.max_length
        with pytest.raises(argparse.ArgumentTypeError):
            option.type("x" * (arg.max_length + 1))
    for command in (a2a.Command, a2a_status.Command):
        assert cli_options(command)["target"].help == f"{TARGET_HELP} (default: console)"


def test_the_cli_refuses_over_the_limits_before_anything_is_sent() -> None:
    def run(*argv: str) -> None:
        call_command("a2a", "send", "--agent", "echo", *argv, stdout=io.StringIO(), stderr=io.StringIO())

    with pytest.raises(CommandError, match=f"at most {MAX_REF} characters"):
        run("--task-id", "t" * (MAX_REF + 1), "-m", "hi")
    with pytest.raises(CommandError, match=f"at most {MAX_FILES} times"):
        run(*[x for i in range(MAX_FILES + 1) for x in ("--file", f"f{i}.txt")])


@pytest.mark.parametrize("arg", ARGUMENTS, ids=lambda a: a.name)
def test_a_limit_changed_in_the_contract_changes_every_way_in(arg: Argument) -> None:
    """Each way in derives its check from the Argument it is given: change the limit there and all follow."""
    changed = dataclasses.replace(arg, max_length=7, max_items=3 if arg.is_list else 0)
    if arg.is_object:  # its cap is on the JSON: the tool's check, the shell's and the form's all take it
        assert send_data({}, changed.max_length) == {}
        with pytest.raises(ToolError):
            send_data({"a": 12}, changed.max_length)
        with pytest.raises(argparse.ArgumentTypeError):
            a2a.json_object(changed)('{"a": 12}')
        assert send_field(changed).max_length == 7
        return
    schema = changed.schema()
    value = ["p" * 7] * 3 if arg.is_list else "p" * 7
    too_long = ["p" * 8] if arg.is_list else "p" * 8
    assert _member(arg.name, value, schema) == value  # the API's check of a member against its schema
    with pytest.raises(BadCall):
        _member(arg.name, too_long, schema)
    with pytest.raises(argparse.ArgumentTypeError):  # the shell
        a2a.capped(changed)("p" * 8)
    field = send_field(changed)  # the console
    if arg.is_list:
        assert schema["maxItems"] == 3 and field.max_count == 3
        with pytest.raises(BadCall):
            _member(arg.name, ["p"] * 4, schema)
    elif arg.name != "agent":
        assert field.max_length == 7


def test_the_api_checks_every_member_against_the_contract() -> None:
    for arg in ARGUMENTS:
        body = {"action": "send", "agent": "echo", "message": "hi"}
        too_long = "p" * (arg.max_length + 1)
        body[arg.name] = [too_long] if arg.is_list else {"p": too_long} if arg.is_object else too_long
        with pytest.raises(BadCall) as refused:
            parse_call(body)
        assert refused.value.field == arg.name and str(arg.max_length) in refused.value.problem
