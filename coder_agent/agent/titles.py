"""A session's title, from its first prompt: no extra model call (which would cost tokens and time)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..acp.schema import ContentBlock

MAX_TITLE = 60


def title_from_prompt(blocks: Sequence[ContentBlock]) -> str | None:
    from ..acp.schema import ResourceLink, TextContent  # here: `title_from_text` is for stdlib callers too

    text = " ".join(block.text for block in blocks if isinstance(block, TextContent))
    if not text.strip():
        names = [block.name for block in blocks if isinstance(block, ResourceLink)]
        return f"About {', '.join(names)}"[:MAX_TITLE] if names else None
    return title_from_text(text)


def title_from_text(text: str) -> str | None:
    """The title of a prompt whose text blocks, joined by spaces, are `text` (stdlib: the early stage's too)."""
    text = text.strip()
    first_line = next((line for line in text.splitlines() if line.strip()), "")
    title = re.sub(r"\s+", " ", first_line).strip().rstrip(".:;,")
    if len(title) > MAX_TITLE:
        title = title[: MAX_TITLE - 1].rsplit(" ", 1)[0].rstrip(".,;:") + "…"
    return title or None
