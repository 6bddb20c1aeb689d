"""A session's title, from its first prompt: no extra model call (which would cost tokens and time)."""

from __future__ import annotations

from collections.abc import Sequence

from ...acp.schema import ContentBlock, ResourceLink, TextContent
from ...kit.titles import MAX_TITLE, title_from_text


def title_from_prompt(blocks: Sequence[ContentBlock]) -> str | None:
    text = " ".join(block.text for block in blocks if isinstance(block, TextContent))
    if not text.strip():
        names = [block.name for block in blocks if isinstance(block, ResourceLink)]
        return f"About {', '.join(names)}"[:MAX_TITLE] if names else None
    return title_from_text(text)
