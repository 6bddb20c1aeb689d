"""The model-facing conversation: typed messages that become provider (litellm/OpenAI-style) dicts."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field


class TextPart(BaseModel):
    type: Literal["text"] = "text"
    text: str


class ImagePart(BaseModel):
    type: Literal["image"] = "image"
    data: str  # base64
    mime_type: str

    def to_provider(self) -> dict[str, Any]:
        return {"type": "image_url", "image_url": {"url": f"data:{self.mime_type};base64,{self.data}"}}


UserPart = Annotated[TextPart | ImagePart, Field(discriminator="type")]


class SystemMessage(BaseModel):
    role: Literal["system"] = "system"
    text: str

    def to_provider(self) -> dict[str, Any]:
        return {"role": "system", "content": self.text}


class UserMessage(BaseModel):
    role: Literal["user"] = "user"
    parts: list[UserPart]

    def to_provider(self) -> dict[str, Any]:
        if all(isinstance(part, TextPart) for part in self.parts):
            return {
                "role": "user",
                "content": "\n\n".join(p.text for p in self.parts if isinstance(p, TextPart)),
            }
        content = [
            {"type": "text", "text": part.text} if isinstance(part, TextPart) else part.to_provider()
            for part in self.parts
        ]
        return {"role": "user", "content": content}


class ToolCallRequest(BaseModel):
    """A tool call the model asked for; `arguments` is the raw JSON text the model wrote."""

    id: str
    name: str
    arguments: str
    # What the provider attached to the call that must go back with it (Gemini's thought signature).
    extra: dict[str, Any] | None = None


class AssistantMessage(BaseModel):
    role: Literal["assistant"] = "assistant"
    text: str = ""
    reasoning: str | None = None
    tool_calls: list[ToolCallRequest] = Field(default_factory=list)
    # Provider data that must go back verbatim on the next call (e.g. Anthropic's signed thinking blocks).
    thinking_blocks: list[dict[str, Any]] | None = None
    # The Responses API's reasoning items (with their encrypted content): sent back by that wire alone (`llm.wire.
    # responses_request`), never by `to_provider`, so a session that changes model never sends them elsewhere.
    reasoning_items: list[dict[str, Any]] | None = None
    # The ACP messageId its text was streamed under (never sent to the provider).
    message_id: str | None = None

    def to_provider(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": self.text or None}
        if self.tool_calls:
            message["tool_calls"] = [_call(c) for c in self.tool_calls]
        if self.reasoning:
            message["reasoning_content"] = self.reasoning
        if self.thinking_blocks:
            message["thinking_blocks"] = self.thinking_blocks
        return message


def _call(call: ToolCallRequest) -> dict[str, Any]:
    provider = {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}
    if call.extra:
        provider["extra_content"] = call.extra
    return provider


class ToolMessage(BaseModel):
    role: Literal["tool"] = "tool"
    tool_call_id: str
    content: str

    def to_provider(self) -> dict[str, Any]:
        return {"role": "tool", "tool_call_id": self.tool_call_id, "content": self.content}


ChatMessage = Annotated[SystemMessage | UserMessage | AssistantMessage | ToolMessage, Field(discriminator="role")]
