"""The few LSP shapes the agent reads: diagnostics, pushed or pulled.

Why not `lsprotocol` (the types pygls uses): five shapes do not need its 480 KB module of generated types and
its attrs + cattrs converters; pydantic, which the agent has already, checks these as they come in. What the
agent sends (initialize, didOpen, didChange, diagnostic) is a handful of plain objects in `server.py`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Wire(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class Position(_Wire):
    line: int = Field(ge=0)
    character: int = Field(ge=0)


class Range(_Wire):
    start: Position
    end: Position


class Diagnostic(_Wire):
    range: Range
    message: str
    severity: int | None = None  # 1 error, 2 warning, 3 information, 4 hint; absent: the client decides (error)
    code: int | str | None = None
    source: str | None = None


class PublishDiagnostics(_Wire):
    uri: str
    version: int | None = None
    diagnostics: list[Diagnostic]


class DocumentDiagnosticReport(_Wire):
    """The answer to `textDocument/diagnostic` (we send no previous result id, so it is always `full`)."""

    kind: Literal["full", "unchanged"]
    items: list[Diagnostic] = Field(default_factory=list)
    related_documents: dict[str, Any] | None = Field(default=None, alias="relatedDocuments")
