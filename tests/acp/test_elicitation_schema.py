"""The elicitation wire types: what a client's `elicitation` capability offers, and an answer checked against the
form that was sent (ACP v1: flat forms of text, numbers, yes/no, one choice, several choices)."""

from __future__ import annotations

from typing import Any

import pytest

from coder_agent.acp.schema import (
    ClientCapabilities,
    CreateElicitationRequest,
    CreateElicitationResponse,
    ElicitationSchema,
)
from tests.support.acp_schema import compile_schema


@pytest.mark.parametrize(
    ("elicitation", "modes"),
    [
        (None, set()),
        ({}, set()),
        ({"form": None, "url": None}, set()),
        ({"form": {}}, {"form"}),
        ({"url": {}}, {"url"}),
        ({"form": {}, "url": {"_meta": {"x": 1}}}, {"form", "url"}),
        ({"form": True, "url": {}}, {"url"}),  # x-deserialize-default-on-error: a mode we cannot read is not offered
        ("yes", set()),
    ],
)
def test_a_mode_is_offered_only_when_its_key_is_present_and_an_object(elicitation: Any, modes: set[str]) -> None:
    capabilities = ClientCapabilities.model_validate({"elicitation": elicitation})
    assert capabilities.elicitation_modes == modes


FORM = ElicitationSchema.model_validate(
    {
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 2, "maxLength": 5, "pattern": "^[a-z]+$"},
            "email": {"type": "string", "format": "email"},
            "when": {"type": "string", "format": "date"},
            "color": {"type": "string", "enum": ["red", "green"]},
            "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]},
            "count": {"type": "integer", "minimum": 1, "maximum": 3},
            "ratio": {"type": "number", "maximum": 1.5},
            "ok": {"type": "boolean"},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}, "maxItems": 2},
        },
        "required": ["name"],
    }
)


@pytest.mark.parametrize(
    ("content", "problems"),
    [
        ({"name": "ab"}, []),
        ({"name": "ab", "email": "a@b.io", "when": "2026-01-31", "color": "red", "size": "l"}, []),
        ({"name": "ab", "count": 3, "ratio": 1.5, "ok": False, "tags": ["a", "c"]}, []),
        ({}, ["`name` is required and was not given"]),
        ({"name": None}, ["`name` is required and was not given"]),
        ({"name": "a"}, ["`name`: shorter than 2 characters"]),
        ({"name": "abcdef"}, ["`name`: longer than 5 characters"]),
        ({"name": "AB"}, ["`name`: does not match the pattern ^[a-z]+$"]),
        ({"name": "ab", "email": "nobody"}, ["`email`: not a valid email"]),
        ({"name": "ab", "when": "31/01/2026"}, ["`when`: not a valid date"]),
        ({"name": "ab", "color": "blue"}, ["`color`: 'blue' is not one of the choices (red, green)"]),
        ({"name": "ab", "size": "Small"}, ["`size`: 'Small' is not one of the choices (s, l)"]),
        ({"name": "ab", "count": 2.5}, ["`count`: expected a whole number, got 2.5"]),
        ({"name": "ab", "count": 0}, ["`count`: 0 is below the minimum 1"]),
        ({"name": "ab", "count": True}, ["`count`: expected a number, got a yes/no"]),
        ({"name": "ab", "ratio": "1"}, ["`ratio`: expected a number, got text"]),
        ({"name": "ab", "ok": "yes"}, ["`ok`: expected yes or no (a boolean), got text"]),
        ({"name": "ab", "tags": ["a", "d"]}, ["`tags`: 'd' is not one of the choices (a, b, c)"]),
        ({"name": "ab", "tags": ["a", "b", "c"]}, ["`tags`: more than 2 chosen"]),
        ({"name": "ab", "tags": "a"}, ["`tags`: expected a list of choices, got text"]),
        (["ab"], ["the answer is not an object of fields but a list"]),
    ],
)
def test_an_answer_is_checked_field_by_field_in_words_the_model_can_act_on(content: Any, problems: list[str]) -> None:
    assert FORM.check(content)[1] == problems


def test_fields_the_form_did_not_name_are_no_error_and_are_left_out() -> None:
    assert FORM.check({"name": "ab", "extra": "<injected>"}) == ({"name": "ab"}, [])


def test_a_string_format_v1_does_not_know_is_dropped_not_refused() -> None:
    form = ElicitationSchema.model_validate({"properties": {"x": {"type": "string", "format": "hostname"}}})
    assert form.check({"x": "anything"}) == ({"x": "anything"}, [])


def test_an_answer_keeps_an_action_it_does_not_know_for_the_caller_to_refuse() -> None:
    assert CreateElicitationResponse.model_validate({"action": "_later"}).action == "_later"


def test_the_requests_the_agent_makes_are_valid_v1_requests() -> None:
    form = CreateElicitationRequest(mode="form", message="m", requested_schema=FORM, session_id="s", tool_call_id="c")
    url = CreateElicitationRequest(mode="url", message="m", url="https://x.example/", elicitation_id="e", request_id=7)
    schema = compile_schema()
    assert schema.errors("CreateElicitationRequest", form.wire()) is None
    assert schema.errors("CreateElicitationRequest", url.wire()) is None
