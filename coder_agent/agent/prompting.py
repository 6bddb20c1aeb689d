"""A prompt turn, from the client's content blocks to its stop reason: the core's side of `session/prompt`.

One turn at a time per session, as a task in its own cancel scope (`cancel` cancels it). However it ends, the
session records how (`last_turn`), is titled after its first exchange, and is saved.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import anyio

from ..acp.schema import AgentMessageChunk, ContentBlock, SessionInfoUpdate, StopReason, TextContent, UserMessageChunk
from ..kit.prompts import mode_note
from ..llm.base import Model, ModelError
from ..llm.messages import TextPart
from ..llm.wire.usable import NO_MODEL_MESSAGE
from .client import META_KEY, Client
from .commands import Commands, CommandServices
from .compaction.compactor import Compactor
from .compaction.window import ContextPolicy, tools_tokens, window_of
from .errors import AgentError, Busy, ClientError, InvalidInput, NotConfigured
from .images import refuse_bad_images, refuse_unseen_images
from .sessions.live import Sessions, now
from .sessions.notes import note, note_text, rewound_notes
from .sessions.session import LastTurn, Session, new_id
from .sessions.titles import title_from_prompt
from .usage import Prices, priced

if TYPE_CHECKING:
    from .tools.base import Tool
    from .workspace.restore import Restore
    from .workspace.turn_files import TurnFiles
    from .workspace.undo import UndoReport


log = logging.getLogger(__name__)

CANCELLED_TURN_WAIT = 10.0  # how long a new prompt waits for a cancelled turn to finish cleaning up

# (model, reasoning effort, session id) -> the model for one call: the session's id keys the provider's prompt cache
ModelFactory = Callable[[str, str | None, str], Model]
"""(litellm model string, reasoning effort or None) -> a Model."""


class Turns(CommandServices):
    """Runs the prompt turns of every session, slash commands included."""

    def __init__(
        self,
        client: Client,
        sessions: Sessions,
        model_for: ModelFactory,
        tools: Callable[[], Sequence[Tool[Any]]],
        *,
        max_turn_requests: int,
        tool_wait: float,
        compact_at: float = 0.8,
        context_window: int | None = None,
        commands: Commands | None = None,
        images: bool | None = None,
        prices: Prices | None = None,
    ) -> None:
        self._client = client
        self._sessions = sessions
        self._model_for = priced(model_for, prices)  # the user's prices where litellm has none
        self._images = images  # whether the model takes images, said by the user (else litellm's map)
        self._make_tools = tools
        self._tools: dict[str, Tool[Any]] | None = None
        self._max_turn_requests = max_turn_requests
        self._tool_wait = tool_wait
        self._compact_at = compact_at
        self._context_window = context_window
        self.commands = commands or Commands(None)

    def builtin(self) -> Mapping[str, Tool[Any]]:
        """The built-in tools, made (and their modules imported) the first time they are needed."""
        if self._tools is None:
            self._tools = {tool.name: tool for tool in self._make_tools()}
        return self._tools

    def tools_for(self, session: Session) -> Mapping[str, Tool[Any]]:
        """The built-in tools, then the MCP servers' by name: an order that holds (the provider caches it)."""
        if session.tool_source is None:
            return self.builtin()
        offered = sorted(session.tool_source.tools(), key=lambda tool: tool.name)
        return {**self.builtin(), **{tool.name: tool for tool in offered}}

    def policy(self, session: Session) -> ContextPolicy:
        """The session's model's context window, and when to compact it."""
        return ContextPolicy(window_of(session.model or "", self._context_window), self._compact_at)

    def compactor(self, session: Session, tools: Mapping[str, Tool[Any]] | None = None) -> Compactor:
        """Summaries are written by the session's model, without a thinking level (they need none)."""
        assert session.model is not None
        specs = [tool.spec() for tool in (tools or {}).values()]
        model = self._model_for(session.model, None, session.id)
        return Compactor(session, model, self._client, self.policy(session), tools_tokens(specs))

    async def compact(self, session: Session, focus: str) -> StopReason:
        """`/compact`: summarise the older turns now (raises `CompactionFailed` if that fails). Notes the model
        has not had yet (files undone ...) go into the summary's request, so the summary does not say otherwise;
        they still come with the next prompt."""
        await self._ensure_system_prompt(session)
        compactor = self.compactor(session, self.tools_for(session))
        since = [note_text(note) for note in session.notes]
        done = await compactor.compact(None, why="asked", focus=focus, keep_least=True, since=since)
        if done is None:
            note = (
                "Nothing to compact yet: the conversation is too short for a summary to free any of the context. "
                "It is unchanged."
            )
            await session.publish(AgentMessageChunk(content=TextContent(text=note), message_id=new_id("msg")))
        return "end_turn"

    async def prompt(self, session: Session, blocks: Sequence[ContentBlock]) -> StopReason:
        """Run one turn; raises `AgentError`s (and `ModelError`) the client should be told about."""
        return await self._prompt(session, blocks)

    async def _prompt(self, session: Session, blocks: Sequence[ContentBlock]) -> StopReason:
        if session.model is None:
            raise NotConfigured(NO_MODEL_MESSAGE, {"setting": "CODER_AGENT_MODEL"})
        refuse_unseen_images(session.model, blocks, self._images)
        refuse_bad_images(blocks)  # before anything is sent or stored
        await _wait_for_cancelled_turn(session)
        model = self._model_for(session.model, session.thought_level, session.id)
        ended = LastTurn("error", "the turn stopped unexpectedly")
        stop_reason: StopReason = "cancelled"
        turn_files = self._turn_files(session)
        reached: list[Sequence[ContentBlock]] = []  # the prompt as the model got it, once it is sent
        with anyio.CancelScope() as scope:
            session.turn_scope = scope
            session.turn_done = anyio.Event()
            try:
                stop_reason = await self._turn(session, blocks, model, turn_files, reached)
                ended = LastTurn(stop_reason)
            except (ModelError, AgentError) as exc:
                ended = LastTurn("error", exc.message)
                raise
            finally:
                if scope.cancel_called:
                    ended = LastTurn("cancelled")
                session.last_turn = replace(ended, at=now())
                session.turn_scope = None
                session.turn_done.set()
                with anyio.CancelScope(shield=True):
                    await self._after_turn(session, reached, turn_files)
        return "cancelled" if scope.cancelled_caught else stop_reason

    def _turn_files(self, session: Session) -> TurnFiles | None:
        from .workspace.files import Files
        from .workspace.turn_files import TurnFiles

        if session.checkpoints is None:
            return None
        turn_files = TurnFiles(session.checkpoints, Files(self._client, session.id), session.roots)
        turn_files.begin(len(session.history), session.compactions.count)
        return turn_files

    async def _ensure_system_prompt(self, session: Session) -> None:
        from .workspace.environment import system_prompt

        if not session.system_prompt:
            session.system_prompt = await system_prompt(session.cwd, session.additional_directories)

    async def _turn(
        self,
        session: Session,
        blocks: Sequence[ContentBlock],
        model: Model,
        turn_files: TurnFiles | None,
        reached: list[Sequence[ContentBlock]],
    ) -> StopReason:
        # Imported here, not at the top: `session/new` is answered without the turn's machinery and the tools.
        from .context import user_message_from_prompt
        from .turn import run_turn

        await self._ensure_system_prompt(session)
        resolved = await self.commands.resolve(session, blocks)
        model_blocks: Sequence[ContentBlock] = blocks
        if resolved is not None and resolved.command.expand is not None:
            try:
                text = await resolved.command.expand(session, resolved.invocation.arguments)
            except InvalidInput as exc:  # a missing argument: a slip in the conversation, not a protocol error
                return await self._slip(session, blocks, exc)
            model_blocks = [TextContent(text=text), *resolved.invocation.rest]
        user = await user_message_from_prompt(model_blocks, self._client, session.id, session.roots)
        _keep_prompt(session, blocks)
        if resolved is not None and resolved.command.action is not None:
            try:
                return await resolved.command.action(session, resolved.invocation.arguments, self)
            except InvalidInput as exc:  # `/rewind 5` with one turn: answered as `/rewind abc` is
                return await self._slip(session, [], exc)
        if session.mode_changed():  # the system prompt keeps the mode it began with: the cache keeps its prefix
            session.notes.append(note(mode_note(session.mode).strip(), []))
        if session.notes:  # what happened between the turns that the model must know (files undone ...)
            # Only a prompt the model is sent takes them: a command (`/undo`, `/compact` ...) leaves them waiting.
            text = "\n".join(f"[{note_text(note)}]" for note in session.notes)
            user = user.model_copy(update={"parts": [TextPart(text=text), *user.parts]})
            if session.checkpoints is not None:
                session.checkpoints.carried(session.notes)
            session.notes = []
        if session.tool_source is not None:
            await session.tool_source.wait_ready(self._tool_wait)
        tools = self.tools_for(session)
        compactor = self.compactor(session, tools)
        if turn_files is not None:
            turn_files.conversation = True
        reached.append(model_blocks)
        return await run_turn(session, user, model, self._client, tools, self._max_turn_requests, compactor, turn_files)

    async def _after_turn(
        self, session: Session, reached: list[Sequence[ContentBlock]], turn_files: TurnFiles | None
    ) -> None:
        """Sum up the files the turn changed, name the session after the first prompt that reached the model (not
        `/compact` or `/undo`, which never do; `/init` by what the model was asked), and save its state."""
        if turn_files is not None:
            await self._sum_up(session, turn_files)
            turn_files.discard_unless_conversation()
        if reached:
            await self.name_after(session, reached[0])
        self._sessions.save(session)

    async def name_after(self, session: Session, blocks: Sequence[ContentBlock]) -> None:
        """Title a session that has none after a prompt that reached the model, and tell the client."""
        title = title_from_prompt(blocks) if session.title is None else None
        if title:
            session.title = title
            try:
                await session.publish(SessionInfoUpdate(title=title, updated_at=now()))
            except ClientError as exc:
                log.info("could not send the title of %s: %s", session.id, exc.message)

    async def _sum_up(self, session: Session, turn_files: TurnFiles) -> None:
        from .workspace.file_notes import relative_to
        from .workspace.turn_files import turn_summary

        try:
            changed = await turn_files.end()
            if changed or turn_files.problems:
                display = relative_to(session.cwd)
                text = turn_summary(changed, display, list(turn_files.problems.values()))
                # `_meta` tells clients this message is the agent's own note, not the model's answer, and gives
                # the files as data (`coder-agent run --json` reports them in its result)
                files = [
                    {"path": display(c.path), "kind": c.kind, "added": c.added, "removed": c.removed} for c in changed
                ]
                note = {META_KEY: {"note": "changed-files", "files": files}}
                await session.publish(
                    AgentMessageChunk(content=TextContent(text=text), message_id=new_id("files"), _meta=note)
                )
        except ClientError as exc:
            log.info("could not send the changed files of %s: %s", session.id, exc.message)
        except Exception:  # the summary must never cost the turn its save
            log.exception("could not sum up the files of the turn")

    async def _slip(self, session: Session, blocks: Sequence[ContentBlock], exc: InvalidInput) -> StopReason:
        """A slash command typed with a slip (an argument missing, more turns than there are): the user is told
        in the conversation, where they typed it, and the turn ends; nothing reaches the model. Clients show a
        refused prompt as a failure of the agent itself (Toad: "the agent failed to start")."""
        if blocks:
            _keep_prompt(session, blocks)
        await self.say(session, exc.message.removeprefix("Invalid params: "))
        return "end_turn"

    async def say(self, session: Session, text: str) -> None:
        await session.publish(AgentMessageChunk(content=TextContent(text=text), message_id=new_id("msg")))

    def _restore(self, session: Session) -> Restore:
        from .workspace.files import Files
        from .workspace.restore import Restore

        return Restore(session.roots, Files(self._client, session.id))

    async def undo(self, session: Session, turns: int = 1, force: bool = False) -> UndoReport:
        """`/undo`: put back the files the session's last `turns` turns changed; the model hears of it with the
        next prompt the model is sent."""
        from .workspace.undo import UndoReport, undo

        if session.checkpoints is None:
            return UndoReport()
        report = await undo(session.checkpoints, self._restore(session), turns, force)
        if not report.nothing:
            session.notes.append(note(report.for_model(), report.turns))
            self._sessions.save(session)
        return report

    async def rewind(self, session: Session, turns: int, force: bool = False) -> UndoReport:
        """`/rewind N`: go back `turns` turns, files and conversation both: what the model and a later load see
        is the session as it was before them. Files someone changed since are left (unless `force`), and said.
        The turn that asks (the command's own) does not count, and its prompt stays in the replay log."""
        from .workspace.undo import undo

        records = session.checkpoints.turn_records() if session.checkpoints is not None else []
        asking = None
        if records and session.checkpoints is not None and records[-1].turn == session.checkpoints.turn:
            asking, records = records[-1], records[:-1]  # this very turn: the `/rewind` itself
        since_compaction = [r for r in records if r.compactions_before == session.compactions.count]
        if turns > len(since_compaction):
            what = f"{len(since_compaction)} turn{'s' if len(since_compaction) != 1 else ''} can be rewound"
            if len(since_compaction) < len(records):
                what += " (the conversation was compacted before the others)"
            raise InvalidInput(f"Invalid params: {what}, not {turns}")
        assert session.checkpoints is not None
        rewound = since_compaction[-turns:]
        first = rewound[0]
        numbers = [record.turn for record in rewound]
        report = await undo(session.checkpoints, self._restore(session), force=force, numbers=numbers)
        session.notes = rewound_notes(session.notes, rewound, first.turn)
        session.forget_from(first.messages_before)
        session.checkpoints.forget_from(first.turn, first.updates_before, asking.updates_before if asking else None)
        if report.left:
            session.notes.append(note(report.for_model(), []))
        self._sessions.save(session)
        return report

    def cancel(self, session_id: str) -> None:
        session = self._sessions.live.get(session_id)
        if session is not None:
            session.cancel_turn()


def _keep_prompt(session: Session, blocks: Sequence[ContentBlock]) -> None:
    """The editor shows the prompt already (as typed); keep it for replay."""
    message_id = new_id("user")
    for block in blocks:
        session.transcript_keep(UserMessageChunk(content=block, message_id=message_id))


async def _wait_for_cancelled_turn(session: Session) -> None:
    """One turn at a time: a new prompt may follow a cancel before that turn has finished cleaning up."""
    scope = session.turn_scope
    if scope is None:
        return
    if not scope.cancel_called:
        raise Busy("Invalid params: a prompt is already running in this session")
    with anyio.move_on_after(CANCELLED_TURN_WAIT):
        await session.turn_done.wait()
    if session.turn_scope is not None:
        raise Busy("Invalid params: the cancelled prompt is still stopping; try again")
