"""The user's language servers: `[lsp.<language>]` tables of their `config.toml` (or `CODER_AGENT_LSP` as JSON).

Only the user's configuration names a server: a checkout is someone else's, and a server is a process. A table
for a language with a default (`python`, `typescript`) changes only what it names (`command` alone, say);
`enabled = false` turns a language off.

    [lsp.rust]
    command = "rust-analyzer"
    extensions = [".rs"]

    [lsp.python]
    enabled = false
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator


class LanguageServerConfig(BaseModel):
    """One `[lsp.<language>]` table."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    command: str | None = Field(default=None, description="The program: a name looked up on PATH, or a path")
    args: list[str] | None = Field(default=None, description="Its arguments (most servers want --stdio)")
    extensions: list[str] | None = Field(default=None, description="The file extensions it checks (.rs)")
    language_id: str | None = Field(default=None, description="The LSP languageId of its files (default: the name)")
    settings: dict[str, Any] | None = Field(
        default=None, description="What it is answered when it asks for its configuration (workspace/configuration)"
    )
    initialization_options: dict[str, Any] | None = Field(default=None, description="Its initializationOptions")
    enabled: bool = True

    @field_validator("extensions")
    @classmethod
    def _dotted(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        dotted = ["." + name.strip().lstrip(".").lower() for name in value if name.strip().lstrip(".")]
        if not dotted:
            raise ValueError("must name at least one extension")
        return dotted

    @field_validator("command")
    @classmethod
    def _not_blank(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("must not be empty")
        return value


def parse_lsp_setting(value: object) -> object:
    """`CODER_AGENT_LSP` comes as text: a JSON object of the same tables (`{"rust": {"command": ...}}`)."""
    if not isinstance(value, str):
        return value
    if not value.strip():
        return {}
    try:
        return json.loads(value)
    except ValueError as exc:
        raise ValueError(f"must be a JSON object of [lsp.<language>] tables ({exc})") from None
