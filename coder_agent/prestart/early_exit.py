"""The input ended before the runtime was in: exit at once, keeping what the client was shown. Stdlib only.

Clients end an agent by closing its stdin and expect it gone promptly (the official TCK's ACP-SHUTDOWN-001 allows
half a second); the runtime's import takes longer than that on a busy machine. So when the input ends while the
early stages serve (`prestart.early`, `prestart.early_session`, `prestart.early_prompt`) and no request in it is left to
answer, the agent exits without the runtime. What the full agent would have saved is saved here first, as it
would have saved it: the session the early `session/new` gave an id for (`Sessions.create`), and the turn whose
text the early first call showed, as a cancel ends it while the full agent reads the early reply on (the turn's
record for undo, the prompt and the text shown as `prompting` keeps them, the title, the turn's end).
`tests/e2e/test_stdin_closed.py` compares the rows with the full agent's own.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

from ..kit.ids import new_id
from .early import EarlyRead
from .early_session import EarlySession

if TYPE_CHECKING:
    from ..store.base import SessionRecord
    from ..store.sqlite import SqliteSessionStore
    from .early_call import EarlyCall


def nothing_left(early: EarlyRead) -> bool:
    """Whether what is left of the input holds no request to answer: blank lines and notifications at most (a
    `session/cancel` of the early turn ends it as the end of the input does), besides the first prompt the early
    stage took (`EarlySession.prompt`)."""
    rest = early.unread
    session = early.answered
    if isinstance(session, EarlySession) and session.prompt is not None and rest.startswith(session.prompt[0]):
        rest = rest[len(session.prompt[0]) :]
    for line in rest.split(b"\n"):
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            return False  # the full agent answers it with an error
        if not isinstance(message, dict) or "id" in message or not isinstance(message.get("method"), str):
            return False
    return True


def keep(early: EarlyRead) -> None:
    """Save the early session and its early turn, if any; a failure is said on stderr (the agent is exiting)."""
    session = early.answered
    if not isinstance(session, EarlySession) or not session.home:
        return
    from ..store.base import StoreError

    try:
        _save(session, early.call)
    except (StoreError, OSError) as exc:
        try:
            os.write(2, f"coder-agent: session {session.id} could not be saved: {exc}\n".encode())
        except OSError:
            pass


def _save(session: EarlySession, call: EarlyCall | None) -> None:
    from pathlib import Path

    from ..store.base import SessionRecord, now
    from ..store.sqlite import SqliteSessionStore

    store = SqliteSessionStore(Path(session.home) / "sessions.db")
    try:
        stamp = now()
        record = SessionRecord(
            id=session.id,
            cwd=session.cwd,
            additional_directories=list(session.additional_directories),
            created_at=stamp,
            updated_at=stamp,
            mode=session.mode,
            model=session.model,
            # `Sessions._record` of a new session: no permission answers yet, nothing spent
            state={"rules": {"tools": {}, "prefixes": [], "exact_commands": {}}, "cost_usd": 0.0},
        )
        store.create(record)
        if session.prompt is not None:
            _keep_turn(store, session, record, call)
    finally:
        store.close()


def _keep_turn(store: SqliteSessionStore, session: EarlySession, record: SessionRecord, call: EarlyCall | None) -> None:
    """The turn's record, the prompt, the text shown of the reply, the title and a cancelled end: as the full
    agent keeps a turn that a cancel ends while it reads the early reply on."""
    from ..kit.titles import title_from_text
    from ..kit.unicode import dumps, scrub
    from ..store.base import now

    assert session.prompt is not None
    texts = session.prompt[1]
    store.checkpoints.begin_turn(session.id, 0, 0)  # a turn of the conversation: `/rewind` can go back before it
    shown = call.shown if call is not None and call.session_id == session.id else []
    sent = [session.model_text] if session.model_text is not None else texts  # a slash command's expansion
    store.append_messages(session.id, [dumps({"role": "user", "parts": [_text(text) for text in sent]}).decode()])
    user = new_id("user")
    for text in texts:
        store.append_update(session.id, dumps(_chunk("user_message_chunk", text, user)))
    if call is not None and shown:
        text = scrub("".join(t for kind, t in shown if kind == "text"))
        thought = scrub("".join(t for kind, t in shown if kind != "text")) or None
        reply: dict[str, object] = {"role": "assistant", "text": text, "reasoning": thought}
        reply |= {"tool_calls": [], "thinking_blocks": None, "reasoning_items": None, "message_id": call.message_id}
        store.append_messages(session.id, [dumps(reply).decode()])
        for kind, piece in shown:
            if kind == "text":
                store.append_update(session.id, dumps(_chunk("agent_message_chunk", piece, call.message_id)))
            else:
                store.append_update(session.id, dumps(_chunk("agent_thought_chunk", piece, call.thought_id)))
    record.title = title_from_text(" ".join(texts))
    if record.title:
        update = {"sessionUpdate": "session_info_update", "title": record.title, "updatedAt": now()}
        store.append_update(session.id, dumps(update))
    answered = call is not None and call.answered is not None  # the reply came whole: the turn ended with it
    record.state["last_turn"] = {"stop_reason": "end_turn" if answered else "cancelled", "at": now()}
    record.updated_at = now()
    store.save(record)


def _text(text: str) -> dict[str, str]:
    return {"type": "text", "text": text}


def _chunk(kind: str, text: str, message_id: str) -> dict[str, object]:
    return {"sessionUpdate": kind, "content": _text(text), "messageId": message_id}
