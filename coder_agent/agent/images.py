"""Images in prompts: refused, with a clear error, when the session's model does not take them."""

from __future__ import annotations

from collections.abc import Sequence

from ..acp.schema import ContentBlock, ImageContent
from ..llm import catalog
from .errors import InvalidInput


def refuse_unseen_images(model: str, blocks: Sequence[ContentBlock]) -> None:
    """Raise `InvalidInput` (-32602) naming the model when the prompt has an image the model cannot see."""
    if not any(isinstance(block, ImageContent) for block in blocks):
        return
    if catalog.supports_vision(model):
        return
    raise InvalidInput(
        f"Invalid params: the model {model} does not take images (litellm does not list it as a vision "
        "model), so this prompt cannot be sent as it is. Remove the image, or choose a model that takes images: "
        "in the model menu, or with CODER_AGENT_MODEL (for example anthropic/claude-sonnet-4-5 or openai/gpt-4o).",
        {"model": model},
    )
