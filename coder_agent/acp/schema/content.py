"""Content blocks: what prompts, message chunks and tool results carry."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from .base import Wire


class Annotations(Wire):
    audience: list[str] | None = None
    last_modified: str | None = None
    priority: float | None = None


class TextContent(Wire):
    type: Literal["text"] = "text"
    text: str
    annotations: Annotations | None = None


class ImageContent(Wire):
    type: Literal["image"] = "image"
    data: str
    mime_type: str
    uri: str | None = None
    annotations: Annotations | None = None


class AudioContent(Wire):
    type: Literal["audio"] = "audio"
    data: str
    mime_type: str
    annotations: Annotations | None = None


class ResourceLink(Wire):
    type: Literal["resource_link"] = "resource_link"
    uri: str
    name: str
    mime_type: str | None = None
    title: str | None = None
    description: str | None = None
    size: int | None = None
    annotations: Annotations | None = None


class TextResourceContents(Wire):
    uri: str
    text: str
    mime_type: str | None = None


class BlobResourceContents(Wire):
    uri: str
    blob: str
    mime_type: str | None = None


class EmbeddedResource(Wire):
    type: Literal["resource"] = "resource"
    resource: TextResourceContents | BlobResourceContents
    annotations: Annotations | None = None


ContentBlock = Annotated[
    TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource,
    Field(discriminator="type"),
]
