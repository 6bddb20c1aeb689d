"""A session's record: every update is stored before it is sent, so a crash loses nothing the editor saw."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError

from ...acp.schema import SessionUpdate
from ...kit.unicode import dumps
from ...llm.messages import ChatMessage
from ...store.base import SessionStore, StoreError
from ..client import Client
from .blobs import stored_message, stored_update

log = logging.getLogger(__name__)


class Transcript:
    def __init__(self, session_id: str, client: Client, store: SessionStore | None) -> None:
        self.session_id = session_id
        self.client = client
        self._store = store

    def detach(self) -> None:
        """Stop keeping anything (the session was deleted)."""
        self._store = None

    def _keep_blob(self, key: str, data: str) -> None:
        if self._store is not None:
            self._store.put_blob(self.session_id, key, data)

    def _keep(self, update: SessionUpdate) -> None:
        if self._store is None:
            return
        try:
            self._store.append_update(self.session_id, stored_update(update, self._keep_blob).wire_json())
        except StoreError as exc:
            log.error("update not saved: %s", exc)

    async def send(self, update: SessionUpdate, *, replay_as: SessionUpdate | None = None, keep: bool = True) -> None:
        """Store, then send. `replay_as` is stored instead when the live form cannot be replayed (a terminal)."""
        if keep:
            self._keep(replay_as or update)
        await self.client.session_update(self.session_id, update)

    def keep(self, update: SessionUpdate) -> None:
        """Store without sending: the user's own prompt, which the editor already shows."""
        self._keep(update)

    def truncate_messages(self, keep: int) -> None:
        if self._store is None:
            return
        try:
            self._store.truncate_messages(self.session_id, keep)
        except StoreError as exc:
            log.error("conversation not truncated: %s", exc)

    def keep_messages(self, messages: Sequence[ChatMessage]) -> None:
        if self._store is None:
            return
        try:
            self._store.append_messages(self.session_id, self._bodies(messages))
        except StoreError as exc:
            log.error("conversation not saved: %s", exc)

    def replace_messages(self, messages: Sequence[ChatMessage]) -> None:
        """Keep `messages` as the whole conversation, at once; raises `StoreError` (nothing changed then)."""
        if self._store is not None:
            self._store.replace_messages(self.session_id, self._bodies(messages))

    def _bodies(self, messages: Sequence[ChatMessage]) -> list[str]:
        return [message_json(stored_message(message, self._keep_blob)) for message in messages]


def message_json(message: BaseModel) -> str:
    """A message as stored: JSON text, with any text that is not Unicode (a provider's broken escape) scrubbed."""
    try:
        return message.model_dump_json()
    except PydanticSerializationError:
        return dumps(message.model_dump(mode="json")).decode()
