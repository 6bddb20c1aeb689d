"""A title from a prompt's text: its first line, tidied and cut. Stdlib only: the early stage titles the session it
saves too (`prestart.early_exit`), the runtime every other (`agent.sessions.titles`)."""

from __future__ import annotations

import re

MAX_TITLE = 60


def title_from_text(text: str) -> str | None:
    """The title of a prompt whose text blocks, joined by spaces, are `text`."""
    text = text.strip()
    first_line = next((line for line in text.splitlines() if line.strip()), "")
    title = re.sub(r"\s+", " ", first_line).strip().rstrip(".:;,")
    if len(title) > MAX_TITLE:
        title = title[: MAX_TITLE - 1].rsplit(" ", 1)[0].rstrip(".,;:") + "…"
    return title or None
