"""Images in prompts: refused, with a clear error (-32602), when the session's model does not take them, or when
the block is not an image a provider takes.

The client's `data` and `mimeType` go to the provider as they are, and are stored with the session: they must be
valid base64 of a PNG, JPEG, GIF or WebP image (the formats the providers take: Anthropic, OpenAI and Gemini
all list these four), whose first bytes match the type the block claims, and no larger than `MAX_IMAGE_BASE64`.
Nothing of a refused prompt is sent or stored: this runs before the turn starts.
"""

from __future__ import annotations

import binascii
from collections.abc import Sequence

from ..acp.schema import ContentBlock, ImageContent
from ..llm import catalog
from .errors import InvalidInput

# Anthropic's limit, the smallest of the providers': its API refuses an image whose base64 text is longer than
# 5 MiB ("image exceeds 5 MB maximum: ... bytes > 5242880 bytes"); OpenAI and Gemini take 20 MB. An image the
# model would refuse is refused here, before the turn, and nothing is stored.
MAX_IMAGE_BASE64 = 5 * 1024 * 1024
KINDS = {"image/png": "PNG", "image/jpeg": "JPEG", "image/gif": "GIF", "image/webp": "WebP"}


def sniffed_type(data: bytes) -> str | None:
    """The MIME type the image's magic bytes say, among `KINDS`; None for anything else."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def image_problem(block: ImageContent) -> str | None:
    """What is wrong with an image block, in words for the user; None when a provider would take it."""
    if block.mime_type not in KINDS:
        return f"its mimeType {block.mime_type!r} is not one the models take ({', '.join(KINDS)})"
    if len(block.data) > MAX_IMAGE_BASE64:
        return (
            f"it is {len(block.data):,} characters of base64, more than the {MAX_IMAGE_BASE64:,} (5 MiB) the models "
            "take: send a smaller image (scaled down, or as JPEG)"
        )
    if block.data.startswith("data:"):
        return "its data is a data: URL; send the base64 text alone (what follows 'base64,')"
    try:
        data = binascii.a2b_base64(block.data, strict_mode=True)
    except (binascii.Error, ValueError) as exc:
        return f"its data is not valid base64 ({exc})"
    found = sniffed_type(data)
    if found is None:
        return f"its data is not a {'/'.join(KINDS.values())} image"
    if found != block.mime_type:
        return f"its data is a {KINDS[found]} image, but its mimeType says {block.mime_type}"
    return None


def refuse_bad_images(blocks: Sequence[ContentBlock]) -> None:
    """Raise `InvalidInput` (-32602) naming the first image block that a provider would not take, and why."""
    images = [block for block in blocks if isinstance(block, ImageContent)]
    for number, block in enumerate(images, start=1):
        problem = image_problem(block)
        if problem is not None:
            which = "the image" if len(images) == 1 else f"image {number} of {len(images)}"
            raise InvalidInput(f"Invalid params: {which} in the prompt cannot be sent: {problem}.", {"image": number})


def refuse_unseen_images(model: str, blocks: Sequence[ContentBlock], takes_images: bool | None = None) -> None:
    """Raise `InvalidInput` (-32602) naming the model when the prompt has an image the model cannot see.

    `takes_images`: what the user said of the model (`CODER_AGENT_IMAGES`); None: litellm's map says."""
    if not any(isinstance(block, ImageContent) for block in blocks):
        return
    if takes_images is True or (takes_images is None and catalog.supports_vision(model)):
        return
    why = "CODER_AGENT_IMAGES is false" if takes_images is False else "litellm does not list it as a vision model"
    raise InvalidInput(
        f"Invalid params: the model {model} does not take images ({why}), so this prompt cannot be sent as it is. "
        "Remove the image, or choose a model that takes images: in the model menu, or with CODER_AGENT_MODEL "
        "(for example anthropic/claude-sonnet-4-5 or openai/gpt-4o). For a local vision model litellm does not "
        "know, set CODER_AGENT_IMAGES=true.",
        {"model": model},
    )
