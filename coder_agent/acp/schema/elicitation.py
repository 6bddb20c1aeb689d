"""`elicitation/create` and `elicitation/complete`: asking the user through a form the client renders, or a URL.

Stable in ACP v1 (schema 1.21): the client advertises `elicitation: {form?: {}, url?: {}}`; a form is a flat
object schema of primitive fields (text, number, integer, yes/no, one choice, several choices); an answer is
`accept` (with `content`), `decline` or `cancel`. An elicitation is scoped to a session (and optionally a tool
call) or to a request outside a session (`authenticate`).

`ElicitationSchema.check` checks an answer against the form that was sent. Hand-written rather than a JSON
Schema library: the form schema is a small closed subset (no nesting, no references), and each problem is said
in words a model and a user can act on ("`provider`: 'x' is not one of the choices"). As in JSON Schema, a
field the form did not name is no error: it is left out of what the caller is given.

v1 and the v2 draft have the same messages and capabilities here; v2 only loosens the string formats (any
value, not just the four below) and asks for at least one choice in `enum`/`oneOf`. We read the former
leniently (an unknown format is dropped) and always send the latter.
"""

from __future__ import annotations

import math
import re
from datetime import date, datetime
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import Field, ValidatorFunctionWrapHandler, field_validator

from .base import Wire

ElicitationMode = Literal["form", "url"]
StringFormat = Literal["email", "uri", "date", "date-time"]


class ElicitationCapabilities(Wire):
    """Each mode is offered only when its key is present and not null (`{}` offers none)."""

    form: dict[str, Any] | None = None
    url: dict[str, Any] | None = None

    @field_validator("form", "url", mode="wrap")
    @classmethod
    def _none_on_error(cls, value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        try:  # `x-deserialize-default-on-error`: a mode we cannot read is not offered
            return handler(value)
        except ValueError:
            return None

    def modes(self) -> frozenset[ElicitationMode]:
        offered: set[ElicitationMode] = set()
        if self.form is not None:
            offered.add("form")
        if self.url is not None:
            offered.add("url")
        return frozenset(offered)


class EnumOption(Wire):
    const: str
    title: str
    description: str | None = None


class StringProperty(Wire):
    """Text, or one choice (`enum`, or `one_of` with titles)."""

    type: Literal["string"] = "string"
    title: str | None = None
    description: str | None = None
    min_length: int | None = Field(default=None, ge=0)
    max_length: int | None = Field(default=None, ge=0)
    pattern: str | None = None
    format: StringFormat | None = None  # one v1 does not know (a newer peer's, an MCP server's) is dropped
    default: str | None = None
    enum: list[str] | None = None
    one_of: list[EnumOption] | None = None

    @field_validator("format", mode="wrap")
    @classmethod
    def _unknown_format_dropped(cls, value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        try:
            return handler(value)
        except ValueError:
            return None

    def choices(self) -> list[str] | None:
        if self.one_of is not None:
            return [option.const for option in self.one_of]
        return self.enum


class NumberProperty(Wire):
    type: Literal["number"] = "number"
    title: str | None = None
    description: str | None = None
    minimum: float | None = None
    maximum: float | None = None
    default: float | None = None


class IntegerProperty(Wire):
    type: Literal["integer"] = "integer"
    title: str | None = None
    description: str | None = None
    minimum: int | None = None
    maximum: int | None = None
    default: int | None = None


class BooleanProperty(Wire):
    type: Literal["boolean"] = "boolean"
    title: str | None = None
    description: str | None = None
    default: bool | None = None


class MultiSelectItems(Wire):
    """The choices of a multi-select: plain (`type: "string"`, `enum`) or titled (`any_of`)."""

    type: Literal["string"] | None = None
    enum: list[str] | None = None
    any_of: list[EnumOption] | None = None

    def choices(self) -> list[str]:
        if self.any_of is not None:
            return [option.const for option in self.any_of]
        return list(self.enum or [])


class MultiSelectProperty(Wire):
    type: Literal["array"] = "array"
    title: str | None = None
    description: str | None = None
    min_items: int | None = Field(default=None, ge=0)
    max_items: int | None = Field(default=None, ge=0)
    items: MultiSelectItems
    default: list[str] | None = None


AnyProperty = StringProperty | NumberProperty | IntegerProperty | BooleanProperty | MultiSelectProperty
FormProperty = Annotated[AnyProperty, Field(discriminator="type")]


class ElicitationSchema(Wire):
    """The form: a flat object of primitive fields, in the order they are shown."""

    type: Literal["object"] = "object"
    title: str | None = None
    description: str | None = None
    properties: dict[str, FormProperty] = Field(default_factory=dict)
    required: list[str] | None = None

    def check(self, content: Any) -> tuple[dict[str, Any], list[str]]:
        """The answer's fields this form names, and what is wrong with it (nothing when it fits)."""
        if content is None:
            content = {}
        if not isinstance(content, dict):
            return {}, [f"the answer is not an object of fields but {_kind(content)}"]
        known = {name: value for name, value in content.items() if name in self.properties and value is not None}
        found = [f"`{name}` is required and was not given" for name in self.required or () if name not in known]
        for name, value in known.items():
            found += [f"`{name}`: {problem}" for problem in _field_problems(self.properties[name], value)]
        return known, found


class CreateElicitationRequest(Wire):
    """`elicitation/create` params: a form (`requested_schema`) or a URL (`elicitation_id`, `url`), scoped to a
    session (and maybe one of its tool calls) or to a request (`request_id`)."""

    mode: ElicitationMode
    message: str
    requested_schema: ElicitationSchema | None = None
    elicitation_id: str | None = None
    url: str | None = None
    session_id: str | None = None
    tool_call_id: str | None = None
    request_id: int | str | None = None


class CreateElicitationResponse(Wire):
    """The user's answer. `action` may be one this agent does not know (a newer client's): it is kept as given
    and treated as no answer. `content` is checked against the form by `ElicitationSchema.check`."""

    action: str
    content: dict[str, Any] | None = None


class CompleteElicitationNotification(Wire):
    elicitation_id: str


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a yes/no"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return "a list"
    return "an object" if isinstance(value, dict) else type(value).__name__


def _field_problems(field: AnyProperty, value: Any) -> list[str]:
    if isinstance(field, StringProperty):
        return _string_problems(field, value)
    if isinstance(field, BooleanProperty):
        return [] if isinstance(value, bool) else [f"expected yes or no (a boolean), got {_kind(value)}"]
    if isinstance(field, MultiSelectProperty):
        return _selection_problems(field, value)
    return _number_problems(field, value)


def _string_problems(field: StringProperty, value: Any) -> list[str]:
    if not isinstance(value, str):
        return [f"expected text, got {_kind(value)}"]
    choices = field.choices()
    if choices is not None:
        return [] if value in choices else [f"{value!r} is not one of the choices ({', '.join(choices)})"]
    found = []
    if field.min_length is not None and len(value) < field.min_length:
        found.append(f"shorter than {field.min_length} characters")
    if field.max_length is not None and len(value) > field.max_length:
        found.append(f"longer than {field.max_length} characters")
    if field.pattern is not None and not _matches(field.pattern, value):
        found.append(f"does not match the pattern {field.pattern}")
    if field.format is not None and not _has_format(field.format, value):
        found.append(f"not a valid {field.format}")
    return found


def _matches(pattern: str, value: str) -> bool:
    try:
        return re.search(pattern, value) is not None
    except re.error:  # an ECMAScript pattern Python cannot read: the client checked it, we cannot
        return True


def _has_format(kind: StringFormat, value: str) -> bool:
    try:
        if kind == "email":
            local, _, domain = value.partition("@")
            return bool(local) and "." in domain and " " not in value
        if kind == "uri":
            parts = urlsplit(value)
            return bool(parts.scheme) and bool(parts.netloc or parts.path)
        if kind == "date":
            date.fromisoformat(value)
        else:
            datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def _number_problems(field: NumberProperty | IntegerProperty, value: Any) -> list[str]:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return [f"expected a number, got {_kind(value)}"]
    if isinstance(field, IntegerProperty) and not float(value).is_integer():
        return [f"expected a whole number, got {value}"]
    found = []
    if field.minimum is not None and value < field.minimum:
        found.append(f"{value} is below the minimum {field.minimum}")
    if field.maximum is not None and value > field.maximum:
        found.append(f"{value} is above the maximum {field.maximum}")
    return found


def _selection_problems(field: MultiSelectProperty, value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        return [f"expected a list of choices, got {_kind(value)}"]
    choices = field.items.choices()
    found = [f"{item!r} is not one of the choices ({', '.join(choices)})" for item in value if item not in choices]
    if field.min_items is not None and len(value) < field.min_items:
        found.append(f"fewer than {field.min_items} chosen")
    if field.max_items is not None and len(value) > field.max_items:
        found.append(f"more than {field.max_items} chosen")
    return found
