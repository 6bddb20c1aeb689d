"""The base of every ACP wire model: camelCase on the wire, snake_case in Python, tolerant of the unknown."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticSerializationError

from ...kit.unicode import dumps


class Wire(BaseModel):
    """An ACP object. Unknown fields are ignored (newer clients), `_meta` is kept.

    `defer_build` keeps class creation cheap: a model's validator is built the first time it is used, so
    only the models on the path to the `initialize` reply cost anything at start-up.
    """

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        extra="ignore",
        defer_build=True,
    )

    meta: dict[str, Any] | None = Field(default=None, alias="_meta")

    def wire(self) -> dict[str, Any]:
        """The JSON-ready dict for the wire: aliases, no unset optionals."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)

    def wire_json(self) -> bytes:
        """The same, serialised: compact JSON bytes with no newline in them (and no text that is not Unicode)."""
        try:
            return self.__pydantic_serializer__.to_json(self, by_alias=True, exclude_none=True)
        except PydanticSerializationError:  # a lone surrogate from a tool's output, say: scrub it, keep the rest
            return dumps(self.wire())


class Empty(Wire):
    """`{}`: the result of methods that answer nothing (`session/set_mode`, `fs/write_text_file` ...)."""
