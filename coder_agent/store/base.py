"""The `SessionStore` seam: what the agent keeps of a session across restarts."""

from __future__ import annotations

import datetime
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol


def now() -> str:
    """A record's time: ISO 8601, UTC, milliseconds (`2026-11-26T22:29:09.121Z`)."""
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class StoreError(Exception):
    """The store cannot be used (unreadable, corrupt, locked); the message says what to do."""


@dataclass
class SessionRecord:
    id: str
    cwd: str
    additional_directories: list[str] = field(default_factory=list)
    title: str | None = None
    created_at: str = ""  # ISO 8601, UTC
    updated_at: str = ""
    mode: str = "default"
    model: str | None = None
    thought_level: str | None = None
    state: dict[str, Any] = field(default_factory=dict)  # remembered permission answers, cumulative cost, ...
    parent_id: str | None = None  # the session this one was forked from


class SessionStore(Protocol):
    def create(self, record: SessionRecord) -> None: ...

    def save(self, record: SessionRecord) -> None:
        """Update everything but the logs."""
        ...

    def get(self, session_id: str) -> SessionRecord | None: ...

    def append_update(self, session_id: str, update_json: bytes) -> None:
        """Append one `session/update` as sent (JSON of the update object); it is on disk when this returns."""
        ...

    def append_messages(self, session_id: str, messages_json: Sequence[str]) -> None: ...

    def truncate_messages(self, session_id: str, keep: int) -> None:
        """Keep only the first `keep` messages."""
        ...

    def replace_messages(self, session_id: str, messages_json: Sequence[str]) -> None:
        """Replace the whole conversation at once (compaction): after a crash it is the old one or the new one."""
        ...

    def put_blob(self, session_id: str, key: str, data: str) -> None:
        """Keep a large value (an image's base64 data) once, under `key`; the logs refer to it by key."""
        ...

    def blob(self, session_id: str, key: str) -> str | None: ...

    def updates(self, session_id: str) -> Iterator[bytes]: ...

    def messages(self, session_id: str) -> list[str]: ...

    def list(self, cwd: str | None, cursor: str | None, limit: int) -> tuple[list[SessionRecord], str | None]:
        """Newest first; the cursor is opaque."""
        ...

    def delete(self, session_id: str) -> None: ...

    def copy_logs(self, source_id: str, target_id: str) -> None:
        """Copy the update log, the messages and the blobs of one session to another (for fork)."""
        ...
