"""A session's title, from its first prompt: no extra model call (which would cost tokens and time)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..acp.schema import ContentBlock, ResourceLink, TextContent

MAX_TITLE = 60


def title_from_prompt(blocks: Sequence[ContentBlock]) -> str | None:
    text = " ".join(block.text for block in blocks if isinstance(block, TextContent)).strip()
    if not text:
        names = [block.name for block in blocks if isinstance(block, ResourceLink)]
        return f"About {', '.join(names)}"[:MAX_TITLE] if names else None
    first_line = next((line for line in text.splitlines() if line.strip()), "")
    title = re.sub(r"\s+", " ", first_line).strip().rstrip(".:;,")
    if len(title) > MAX_TITLE:
        title = title[: MAX_TITLE - 1].rsplit(" ", 1)[0].rstrip(".,;:") + "…"
    return title or None
