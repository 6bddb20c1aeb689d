"""Notes for the model: what happened between its turns that it must know (files undone ...), told once.

A note waits in the session (`Session.notes`, saved with it) until a prompt is sent to the model, which takes
it in front of the user's text; a command that asks the model nothing (`/undo`, `/compact`, `/rewind`) leaves it
waiting. The turn whose prompt took it keeps it (`checkpoints.carried`): when a rewind drops that prompt, the
note waits again, unless every turn it was about is dropped too. A note is `{"text": ..., "turns": [...]}`, the
turns being those whose changes it is about (none: about the session as it is now).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ...store.checkpoints import TurnRecord

Note = dict[str, Any]


def note(text: str, turns: Sequence[int]) -> Note:
    return {"text": text, "turns": list(turns)}


def note_text(note: Note) -> str:
    return str(note.get("text", ""))


def notes_from(stored: object) -> list[Note]:
    """The notes a session was saved with (plain strings, as an older version saved them, included)."""
    if not isinstance(stored, list):
        return []
    found: list[Note] = []
    for item in stored:
        if isinstance(item, str):
            found.append(note(item, []))
        elif isinstance(item, dict) and isinstance(item.get("text"), str):
            turns = item.get("turns")
            numbers = [turn for turn in turns if isinstance(turn, int)] if isinstance(turns, list) else []
            found.append(note(item["text"], numbers))
    return found


def _about_dropped(item: Note, first: int) -> bool:
    turns = item.get("turns") or []
    return bool(turns) and all(turn >= first for turn in turns)


def rewound_notes(waiting: Sequence[Note], rewound: Sequence[TurnRecord], first: int) -> list[Note]:
    """The notes waiting after a rewind to before turn `first`: those the rewound prompts had taken come back,
    and none is kept that is only about turns the rewind drops."""
    back: list[Note] = []
    for record in rewound:
        try:
            back += notes_from(json.loads(record.notes or "[]"))
        except ValueError:
            continue
    return [item for item in [*back, *waiting] if not _about_dropped(item, first)]
