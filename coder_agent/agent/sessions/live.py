"""Live sessions and their stored form: create, restore, replay, list, close, delete, fork."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from functools import partial

import anyio
from pydantic import TypeAdapter, ValidationError

from ...llm.messages import ChatMessage
from ...store.base import SessionRecord, SessionStore, StoreError, now
from ...store.checkpoints import SqliteCheckpoints
from ..client import Client
from ..diagnostics import Diagnostics
from ..errors import Busy, InvalidInput, SessionNotFound, StoreUnavailable
from ..permissions.gate import PermissionRules
from ..permissions.lasting_rules import RuleBook
from ..workspace.checkpoints import Checkpoints
from .blobs import expand
from .claims import SessionClaims
from .live_locks import LiveLocks
from .notes import notes_from
from .repair import looks_interrupted, repair
from .session import CompactionStats, LastTurn, Session, new_id
from .transcript import Transcript, message_json

log = logging.getLogger(__name__)

_MESSAGE = TypeAdapter[ChatMessage](ChatMessage)
REPLAY_BATCH = 256


__all__ = ["Sessions", "now"]


def _rules_state(rules: PermissionRules) -> dict[str, object]:
    return {
        "tools": rules.tools,
        "prefixes": [[list(prefix), allowed] for prefix, allowed in rules.prefixes.items()],
        "exact_commands": rules.exact_commands,
    }


def _last_turn_from(state: object) -> LastTurn | None:
    if not isinstance(state, dict) or not isinstance(state.get("stop_reason"), str):
        return None
    error = state.get("error")
    return LastTurn(state["stop_reason"], error if isinstance(error, str) else None, str(state.get("at", "")))


def _rules_from(state: object) -> PermissionRules:
    if not isinstance(state, dict):
        return PermissionRules()
    return PermissionRules(
        tools=dict(state.get("tools", {})),
        prefixes={tuple(prefix): bool(allowed) for prefix, allowed in state.get("prefixes", [])},
        exact_commands=dict(state.get("exact_commands", {})),
    )


class Sessions:
    """The sessions one connection has live, and the store they are kept in.

    `claims`: when several connections share the store (`coder-agent serve`), a session is live in one of them
    at a time; bringing back a session another connection holds is refused (`Busy`).
    """

    def __init__(
        self,
        client: Client,
        store: SessionStore | None,
        store_problem: str | None = None,
        claims: SessionClaims | None = None,
    ) -> None:
        self._client = client
        self._store = store
        self._store_problem = store_problem
        self._claims = claims
        self.live: dict[str, Session] = {}
        self.rule_book: RuleBook | None = None  # the user's lasting permission rules, given to every session
        # Each live session's language servers (made here, started when first needed)
        self.diagnostics_for: Callable[[Session], Diagnostics | None] | None = None
        checkpoints = self._checkpoint_store()
        self._locks = LiveLocks(checkpoints.home) if checkpoints is not None else None  # across processes

    def _claim(self, session_id: str) -> None:
        if self._claims is not None and not self._claims.claim(session_id):
            raise Busy(
                f"Invalid params: session {session_id} is open on another connection; close it there "
                "(session/close) or end that connection, then try again",
                {"sessionId": session_id},
            )
        if self._locks is not None and not self._locks.hold(session_id):
            if self._claims is not None:
                self._claims.release(session_id)
            raise Busy(
                f"Invalid params: session {session_id} is open in another agent process; close it there (or end "
                "that process), then try again",
                {"sessionId": session_id},
            )

    def _release(self, session_id: str, forget: bool = False) -> None:
        if self._claims is not None:
            self._claims.release(session_id)
        if self._locks is not None:
            self._locks.release(session_id, forget)

    def release_locks(self) -> None:
        """The connection has ended (stdio, a headless run): no session is live here any more."""
        if self._locks is not None:
            self._locks.release_all()

    async def wait_released(self, session_id: str) -> None:
        """Give a connection that is going away the time to let the session go (bounded)."""
        if self._claims is not None and session_id not in self.live:
            await self._claims.wait_released(session_id)

    def _require_store(self) -> SessionStore:
        if self._store is None:
            raise StoreUnavailable(f"Sessions are not saved: {self._store_problem}")
        return self._store

    def _checkpoint_store(self) -> SqliteCheckpoints | None:
        store = getattr(self._store, "checkpoints", None)
        return store if isinstance(store, SqliteCheckpoints) else None

    def get(self, session_id: str) -> Session:
        session = self.live.get(session_id)
        if session is None:
            raise SessionNotFound(session_id)
        return session

    def create(
        self, cwd: str, directories: Sequence[str], mode: str, model: str | None, session_id: str | None = None
    ) -> Session:
        """A new session (`session_id`: the id the early `session/new` gave it, see `prestart.early_session`)."""
        session_id = session_id or new_id("sess")
        stamp = now()
        session = Session(
            id=session_id, cwd=cwd, additional_directories=list(directories), mode=mode, model=model, created_at=stamp
        )
        session.transcript = Transcript(session_id, self._client, self._store)
        session.checkpoints = Checkpoints(self._checkpoint_store(), session_id)
        session.rule_book = self.rule_book
        session.diagnostics = self.diagnostics_for(session) if self.diagnostics_for is not None else None
        self._claim(session_id)  # a new id: nobody else holds it
        if self._store is not None:
            try:
                self._store.create(self._record(session, stamp))
            except StoreError as exc:
                log.error("session %s will not be saved: %s", session_id, exc)
        self.live[session_id] = session
        return session

    def _record(self, session: Session, updated_at: str | None = None) -> SessionRecord:
        return SessionRecord(
            id=session.id,
            cwd=session.cwd,
            additional_directories=session.additional_directories,
            title=session.title,
            created_at=session.created_at,
            updated_at=updated_at or now(),
            mode=session.mode,
            model=session.model,
            thought_level=session.thought_level,
            state={
                "rules": _rules_state(session.rules),
                "cost_usd": session.cost_usd,
                **({"compactions": session.compactions.state()} if session.compactions.count else {}),
                **({"last_turn": session.last_turn.state()} if session.last_turn else {}),
                **({"notes": list(session.notes)} if session.notes else {}),
            },
            parent_id=None,
        )

    def save(self, session: Session) -> None:
        if self._store is None or session.deleted:
            return  # deleted sessions must stay deleted, whatever their cancelled turn still does
        try:
            self._store.save(self._record(session))
        except StoreError as exc:
            log.error("session %s not saved: %s", session.id, exc)

    def restore(self, session_id: str, cwd: str | None, directories: Sequence[str] | None) -> Session:
        """The live session, or the stored one brought back to life (without replaying it).

        `cwd` and `directories`: where the client says the session lives now (None: where it was).
        """
        session = self.live.get(session_id)
        if session is None:
            store = self._require_store()
            self._claim(session_id)
            try:
                session = self._revive(store, session_id)
            except BaseException:
                self._release(session_id)
                raise
            self.live[session_id] = session
        if cwd is not None:
            session.cwd = cwd
        if directories is not None:
            session.additional_directories = list(directories)
        return session

    def _revive(self, store: SessionStore, session_id: str) -> Session:
        record = store.get(session_id)
        if record is None:
            raise SessionNotFound(session_id)
        session = Session(
            id=record.id,
            cwd=record.cwd,
            additional_directories=list(record.additional_directories),
            mode=record.mode,
            model=record.model,
            thought_level=record.thought_level,
            title=record.title,
            created_at=record.created_at,
            rules=_rules_from(record.state.get("rules")),
            cost_usd=float(record.state.get("cost_usd", 0.0)),
            last_turn=_last_turn_from(record.state.get("last_turn")),
            notes=notes_from(record.state.get("notes")),
            compactions=CompactionStats.from_state(record.state.get("compactions")),
        )
        session.history = self._stored_history(store, session_id)
        session.transcript = Transcript(session_id, self._client, store)
        session.checkpoints = Checkpoints(self._checkpoint_store(), session_id)
        session.rule_book = self.rule_book
        session.diagnostics = self.diagnostics_for(session) if self.diagnostics_for is not None else None
        if looks_interrupted(session.history):
            self._repair(store, session)
        return session

    @staticmethod
    def _repair(store: SessionStore, session: Session) -> None:
        fixed = repair(session.history, store.updates(session.id))
        session.history = fixed.history
        store.append_messages(session.id, [message_json(message) for message in fixed.added])
        for update in fixed.updates:
            store.append_update(session.id, update.wire_json())
        log.info(
            "repaired %s after an interrupted turn: %d messages, %d tool calls",
            session.id,
            len(fixed.added),
            len(fixed.updates),
        )

    @staticmethod
    def _stored_history(store: SessionStore, session_id: str) -> list[ChatMessage]:
        history: list[ChatMessage] = []
        for body in store.messages(session_id):
            try:
                history.append(_MESSAGE.validate_json(expand(body.encode(), partial(store.blob, session_id))))
            except ValidationError as exc:
                log.warning("skipping an unreadable stored message of %s: %s", session_id, exc)
        return history

    async def replay(self, session: Session) -> int:
        """Send every stored update of the session again, in order, in batches; returns how many."""
        store = self._require_store()
        sent = 0
        batch: list[bytes] = []
        lookup = partial(store.blob, session.id)
        for body in store.updates(session.id):
            batch.append(expand(body, lookup))
            if len(batch) == REPLAY_BATCH:
                await self._client.replay_updates(session.id, batch)
                sent += len(batch)
                batch = []
        if batch:
            await self._client.replay_updates(session.id, batch)
            sent += len(batch)
        return sent

    async def close(self, session_id: str) -> None:
        """Cancel the turn, let it finish cleaning up (bounded), free the session, and save it."""
        session = self.live.pop(session_id, None)
        if session is not None:
            await session.shut_down()
            self.save(session)
            self._release(session_id)

    async def delete(self, session_id: str) -> None:
        session = self.live.pop(session_id, None)
        if session is None:
            self._claim(session_id)  # not while another connection is using it
        else:
            session.deleted = True
            if session.transcript is not None:
                session.transcript.detach()  # what the cancelled turn still says is not kept
            await session.shut_down()
        try:
            if self._store is not None:
                self._store.delete(session_id)
        finally:
            self._release(session_id, forget=True)
        await anyio.to_thread.run_sync(self._prune_snapshots)

    def _prune_snapshots(self) -> None:
        """The snapshots of roots no saved or live session names go with the last session that did."""
        from ..workspace.snapshot_upkeep import prune

        checkpoints = self._checkpoint_store()
        roots = getattr(self._store, "roots", None)
        if checkpoints is None or roots is None:
            return
        try:
            in_use = set(roots()) | {root for session in self.live.values() for root in session.roots}
        except StoreError as exc:
            log.warning("snapshots not pruned: %s", exc)
            return
        prune(checkpoints.home, in_use)

    def cancel_turns(self) -> None:
        """Cancel every turn running, as `session/cancel` does (the client is gone)."""
        for session in self.live.values():
            session.cancel_turn()

    def release_all(self) -> None:
        """The connection has ended and its turns have stopped: save every live session and let it go."""
        for session_id, session in list(self.live.items()):
            self.save(session)
            self._release(session_id)
        self.live.clear()

    def fork(self, source: Session, cwd: str, directories: Sequence[str]) -> Session:
        fork = self.create(cwd, directories, source.mode, source.model)
        fork.thought_level = source.thought_level
        fork.history = list(source.history)
        fork.title = f"{source.title} (fork)" if source.title else None
        fork.rules = PermissionRules()  # "always" answers were given for the original session
        if self._store is not None:
            self._store.copy_logs(source.id, fork.id)
            checkpoints = self._checkpoint_store()
            if checkpoints is not None:  # so the fork can undo the turns it shares with its source
                checkpoints.copy(source.id, fork.id)
            record = self._record(fork)
            record.parent_id = source.id
            self._store.save(record)
        return fork

    def list(self, cwd: str | None, cursor: str | None, limit: int = 50) -> tuple[list[SessionRecord], str | None]:
        store = self._require_store()
        try:
            return store.list(cwd, cursor, limit)
        except ValueError as exc:
            raise InvalidInput(f"Invalid params: {exc}") from exc
