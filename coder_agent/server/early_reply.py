"""The first prompt's reply as far as the early stage showed it (`prestart.early_call`): sent to the editor once.

The session's first model call takes the early call over and parses its reply from the first byte (`DirectModel`),
so the turn streams what the early stage showed again, and keeps it like any reply. The core knows nothing of this:
here, on the way to the editor, the pieces the editor has already been sent are left out, and the rest of that
message goes under the message ids the editor saw it start under. If the turn ends before any model call took the
early call over (a cancel came first), what was shown is kept in the conversation here (`keep_unread`). When the
early stage answered the prompt itself (the whole reply came before the runtime), the runtime's turn keeps the
turn as ever, and its own answer to the prompt is left out (`WithoutAnswer`): the editor has it already.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import anyio.abc

from ..acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    ContentBlock,
    SessionUpdate,
    TextContent,
    UserMessageChunk,
)
from ..agent.sessions.session import Session, new_id
from ..kit.unicode import dumps, scrub
from ..llm.messages import AssistantMessage, TextPart, UserMessage
from ..prestart.early_call import EarlyCall

log = logging.getLogger(__name__)


class EarlyReply:
    def __init__(self, call: EarlyCall) -> None:
        self.call = call
        self._first: bool = True  # the session's first prompt (the early one) is still to come
        self.kept = anyio.Event()  # its turn is over: the runtime kept it
        self._left = {
            "text": [text for kind, text in call.shown if kind == "text"],
            "thought": [text for kind, text in call.shown if kind != "text"],
        }
        self._ids: dict[str, str] = {}  # the turn's message id -> the one the editor was shown its start under

    def is_first_prompt(self, session_id: str) -> bool:
        """Whether this prompt is the session's first, the one the early stage made the call for (the runtime reads
        it first of all its input). Ask at once, before waiting on anything: the handlers run concurrently."""
        if session_id != self.call.session_id or not self._first:
            return False
        self._first = False
        return True

    async def wait_kept(self, session_id: str) -> None:
        """Before another prompt of the session: the early-answered one must be kept first (the editor, told its
        turn ended, may send the next at once; the runtime is still keeping it)."""
        if session_id == self.call.session_id and self.call.answered is not None and not self._first:
            with anyio.move_on_after(30):
                await self.kept.wait()

    def filter(self, session_id: str, update: SessionUpdate) -> SessionUpdate | None:
        """`update` as the editor should get it: None when it was sent already."""
        call = self.call
        if session_id != call.session_id or not call.adopted:
            return update
        if isinstance(update, AgentMessageChunk):
            kind, shown_as = "text", call.message_id
        elif isinstance(update, AgentThoughtChunk):
            kind, shown_as = "thought", call.thought_id
        else:
            return update
        left = self._left[kind]
        text = update.content.text if isinstance(update.content, TextContent) else None
        if left:
            if text == left[0]:
                left.pop(0)
                self._ids.setdefault(update.message_id or "", shown_as)
                return None
            log.error("the early first call showed %r where the reply has %r", left[0], text)
            left.clear()
        alias = self._ids.get(update.message_id or "")
        return update if alias is None else update.model_copy(update={"message_id": alias})

    def keep_unread(self, session: Session, blocks: Sequence[ContentBlock], history_before: int) -> bool:
        """When the session's first turn ended before any model call took the early call over: close it, and keep
        what it showed in the conversation, after the prompt (the user saw it). Whether anything was kept."""
        call = self.call
        if call.session_id != session.id or not call.claim():
            return False
        call.response.close()
        if not call.shown:
            return False
        if len(session.history) == history_before:  # the prompt is not in yet either
            texts = [block.text for block in blocks if isinstance(block, TextContent)]
            session.add(UserMessage(parts=[TextPart(text=text) for text in texts]))
            user_id = new_id("user")
            for block in blocks:
                session.transcript_keep(UserMessageChunk(content=block, message_id=user_id))
        text = "".join(t for kind, t in call.shown if kind == "text")
        thought = "".join(t for kind, t in call.shown if kind != "text")
        reply = AssistantMessage(text=scrub(text), reasoning=scrub(thought) or None, message_id=call.message_id)
        session.add(reply)
        for kind, piece in call.shown:
            content = TextContent(text=piece)
            if kind == "text":
                session.transcript_keep(AgentMessageChunk(content=content, message_id=call.message_id))
            else:
                session.transcript_keep(AgentThoughtChunk(content=content, message_id=call.thought_id))
        return True


class WithoutAnswer(anyio.abc.ByteSendStream):
    """The agent's output less its answer to one request (the early stage answered it): each message is written
    whole, one `send` each (`acp.jsonrpc`), so the answer is the one that starts as an answer to that id does."""

    def __init__(self, inner: anyio.abc.ByteSendStream, request_id: Any) -> None:
        self._inner = inner
        self._answer: bytes | None = b'{"jsonrpc":"2.0","id":' + dumps(request_id) + b","

    async def send(self, item: bytes) -> None:
        if self._answer is not None and item.startswith(self._answer):
            self._answer = None
            log.debug("the prompt was answered by the early stage: the turn's own answer is not sent")
            return
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()
