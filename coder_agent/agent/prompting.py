"""A prompt turn, from the client's content blocks to its stop reason: the core's side of `session/prompt`.

One turn at a time per session, as a task in its own cancel scope (`cancel` cancels it). However it ends, the
session records how (`last_turn`), is titled after its first exchange, and is saved.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import anyio

from ..acp.schema import AgentMessageChunk, ContentBlock, SessionInfoUpdate, StopReason, TextContent, UserMessageChunk
from ..kit.unicode import scrub
from ..llm import cache_key
from ..llm.base import Model, ModelError
from ..llm.messages import TextPart
from .activity import Activity
from .client import META_KEY, Client
from .commands import Commands, CommandServices
from .compaction.compactor import Compactor
from .compaction.window import ContextPolicy, tools_tokens, window_of
from .errors import AgentError, Busy, ClientError, InvalidInput, NotConfigured
from .images import refuse_bad_images, refuse_unseen_images
from .sessions.live import Sessions, now
from .sessions.session import LastTurn, Session, new_id
from .sessions.titles import title_from_prompt
from .workspace.checkpoints import UndoReport

if TYPE_CHECKING:
    from .tools.base import Tool
    from .workspace.turn_files import TurnFiles


def _display(path: str, cwd: str) -> str:
    """`path` relative to the session's folder when it is inside it."""
    prefix = cwd.rstrip(os.sep) + os.sep
    return path[len(prefix) :] if path.startswith(prefix) else path


log = logging.getLogger(__name__)

NO_MODEL_MESSAGE = (
    "No model is configured. Set CODER_AGENT_MODEL to a litellm model string "
    "(for example anthropic/claude-sonnet-4-5, openai/gpt-4o or ollama/qwen2.5-coder), and give its key in "
    "CODER_AGENT_API_KEY or the provider's own variable (ANTHROPIC_API_KEY, OPENAI_API_KEY, ...). "
    "For an OpenAI-compatible server also set CODER_AGENT_API_BASE."
)
CANCELLED_TURN_WAIT = 10.0  # how long a new prompt waits for a cancelled turn to finish cleaning up

ModelFactory = Callable[[str, str | None], Model]
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
    ) -> None:
        self._client = client
        self._sessions = sessions
        self._model_for = model_for
        self._make_tools = tools
        self._tools: dict[str, Tool[Any]] | None = None
        self._max_turn_requests = max_turn_requests
        self._tool_wait = tool_wait
        self._compact_at = compact_at
        self._context_window = context_window
        self.commands = commands or Commands(None)
        self.activity = Activity()

    def builtin(self) -> Mapping[str, Tool[Any]]:
        """The built-in tools, made (and their modules imported) the first time they are needed."""
        if self._tools is None:
            self._tools = {tool.name: tool for tool in self._make_tools()}
        return self._tools

    def tools_for(self, session: Session) -> Mapping[str, Tool[Any]]:
        if session.tool_source is None:
            return self.builtin()
        return {**self.builtin(), **{tool.name: tool for tool in session.tool_source.tools()}}

    def policy(self, session: Session) -> ContextPolicy:
        """The session's model's context window, and when to compact it."""
        return ContextPolicy(window_of(session.model or "", self._context_window), self._compact_at)

    def compactor(self, session: Session, tools: Mapping[str, Tool[Any]] | None = None) -> Compactor:
        """Summaries are written by the session's model, without a thinking level (they need none)."""
        assert session.model is not None
        specs = [tool.spec() for tool in (tools or {}).values()]
        model = self._model_for(session.model, None)
        return Compactor(session, model, self._client, self.policy(session), tools_tokens(specs))

    async def compact(self, session: Session, focus: str) -> StopReason:
        """`/compact`: summarise the older turns now (raises `CompactionFailed` if that fails)."""
        await self._ensure_system_prompt(session)
        compactor = self.compactor(session, self.tools_for(session))
        done = await compactor.compact(None, why="asked", focus=focus, keep_least=True)
        if done is None:
            note = "Nothing to compact yet: the conversation is no longer than what is kept verbatim."
            await session.publish(AgentMessageChunk(content=TextContent(text=note), message_id=new_id("msg")))
        return "end_turn"

    async def prompt(self, session: Session, blocks: Sequence[ContentBlock]) -> StopReason:
        """Run one turn; raises `AgentError`s (and `ModelError`) the client should be told about."""
        with self.activity.turn(), cache_key.for_session(session.id):  # the session's calls share one cache key
            return await self._prompt(session, blocks)

    async def _prompt(self, session: Session, blocks: Sequence[ContentBlock]) -> StopReason:
        if session.model is None:
            raise NotConfigured(NO_MODEL_MESSAGE, {"setting": "CODER_AGENT_MODEL"})
        refuse_unseen_images(session.model, blocks)
        refuse_bad_images(blocks)  # before anything is sent or stored
        await _wait_for_cancelled_turn(session)
        model = self._model_for(session.model, session.thought_level)
        ended = LastTurn("error", "the turn stopped unexpectedly")
        stop_reason: StopReason = "cancelled"
        turn_files = self._turn_files(session)
        history_before = len(session.history)
        with anyio.CancelScope() as scope:
            session.turn_scope = scope
            session.turn_done = anyio.Event()
            try:
                stop_reason = await self._turn(session, blocks, model, turn_files)
                ended = LastTurn(stop_reason)
            except (ModelError, AgentError) as exc:
                ended = LastTurn("error", exc.message)
                raise
            finally:
                if scope.cancel_called:
                    ended = LastTurn("cancelled")
                session.last_turn = replace(ended, at=now())
                _keep_early_reply(session, blocks, history_before)
                session.turn_scope = None
                session.turn_done.set()
                with anyio.CancelScope(shield=True):
                    await self._after_turn(session, blocks, turn_files)
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
        self, session: Session, blocks: Sequence[ContentBlock], model: Model, turn_files: TurnFiles | None
    ) -> StopReason:
        # Imported here, not at the top: `session/new` is answered without the turn's machinery and the tools.
        from .context import user_message_from_prompt
        from .turn import run_turn

        await self._ensure_system_prompt(session)
        resolved = await self.commands.resolve(session, blocks)
        model_blocks: Sequence[ContentBlock] = blocks
        if resolved is not None and resolved.command.expand is not None:
            text = await resolved.command.expand(session, resolved.invocation.arguments)
            model_blocks = [TextContent(text=text), *resolved.invocation.rest]
        user = await user_message_from_prompt(model_blocks, self._client, session.id, session.roots)
        if session.notes:  # what happened between the turns that the model must know (files undone ...)
            notes = "\n".join(f"[{note}]" for note in session.notes)
            user = user.model_copy(update={"parts": [TextPart(text=notes), *user.parts]})
            session.notes = []
        _keep_prompt(session, blocks)
        if resolved is not None and resolved.command.action is not None:
            return await resolved.command.action(session, resolved.invocation.arguments, self)
        if session.tool_source is not None:
            await session.tool_source.wait_ready(self._tool_wait)
        tools = self.tools_for(session)
        compactor = self.compactor(session, tools)
        if turn_files is not None:
            turn_files.conversation = True
        return await run_turn(session, user, model, self._client, tools, self._max_turn_requests, compactor, turn_files)

    async def _after_turn(self, session: Session, blocks: Sequence[ContentBlock], turn_files: TurnFiles | None) -> None:
        """Sum up the files the turn changed, name the session after its first exchange, and save its state."""
        if turn_files is not None:
            await self._sum_up(session, turn_files)
            turn_files.discard_unless_conversation()
        if session.title is None:
            title = title_from_prompt(blocks)
            if title:
                session.title = title
                try:
                    await session.publish(SessionInfoUpdate(title=title, updated_at=now()))
                except ClientError as exc:
                    log.info("could not send the title of %s: %s", session.id, exc.message)
        self._sessions.save(session)

    async def _sum_up(self, session: Session, turn_files: TurnFiles) -> None:
        from .workspace.turn_files import turn_summary

        try:
            changed = await turn_files.end()
            if changed or turn_files.problems:
                text = turn_summary(
                    changed, lambda path: _display(path, session.cwd), list(turn_files.problems.values())
                )
                # `_meta` tells clients this message is the agent's own note, not the model's answer
                note = {META_KEY: {"note": "changed-files"}}
                await session.publish(
                    AgentMessageChunk(content=TextContent(text=text), message_id=new_id("files"), _meta=note)
                )
        except ClientError as exc:
            log.info("could not send the changed files of %s: %s", session.id, exc.message)
        except Exception:  # the summary must never cost the turn its save
            log.exception("could not sum up the files of the turn")

    async def say(self, session: Session, text: str) -> None:
        await session.publish(AgentMessageChunk(content=TextContent(text=text), message_id=new_id("msg")))

    async def undo(self, session: Session, turns: int = 1, force: bool = False) -> UndoReport:
        """`/undo`: put back the files the session's last `turns` turns changed; the model hears of it with the
        next prompt."""
        from .workspace.files import Files
        from .workspace.turn_files import reader

        if session.checkpoints is None:
            return UndoReport()
        files = Files(self._client, session.id)
        report = await session.checkpoints.undo(reader(session.roots), files.put_bytes, turns, force)
        if not report.nothing:
            session.notes.append(report.for_model())
            self._sessions.save(session)
        return report

    async def rewind(self, session: Session, turns: int, force: bool = False) -> UndoReport:
        """`/rewind N`: go back `turns` turns, files and conversation both: what the model and a later load see
        is the session as it was before them. Files someone changed since are left (unless `force`), and said.
        The turn that asks (the command's own) does not count."""
        from .workspace.files import Files
        from .workspace.turn_files import reader

        records = session.checkpoints.turn_records() if session.checkpoints is not None else []
        if records and session.checkpoints is not None and records[-1].turn == session.checkpoints.turn:
            records = records[:-1]  # this very turn: the `/rewind` itself
        since_compaction = [r for r in records if r.compactions_before == session.compactions.count]
        if turns > len(since_compaction):
            what = f"{len(since_compaction)} turn{'s' if len(since_compaction) != 1 else ''} can be rewound"
            if len(since_compaction) < len(records):
                what += " (the conversation was compacted before the others)"
            raise InvalidInput(f"Invalid params: {what}, not {turns}")
        assert session.checkpoints is not None
        first = since_compaction[-turns]
        files = Files(self._client, session.id)
        numbers = [record.turn for record in since_compaction[-turns:]]
        report = await session.checkpoints.undo(reader(session.roots), files.put_bytes, force=force, numbers=numbers)
        session.forget_from(first.messages_before)
        session.checkpoints.forget_from(first.turn, first.updates_before)
        if report.changed_since or report.not_kept:
            session.notes.append(report.for_model())
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


def _keep_early_reply(session: Session, blocks: Sequence[ContentBlock], history_before: int) -> None:
    """The text the early first call (`llm.early_call`) showed, when the turn ended before its model call took
    the call over (a cancel came first): the user saw it, so the conversation holds it, after the prompt."""
    from ..llm.messages import AssistantMessage, UserMessage
    from ..prestart import early_call

    call = early_call.claim(session.id)
    if call is None:
        return
    call.response.close()
    if not call.shown:
        return
    if len(session.history) == history_before:  # the prompt is not in yet either (kept as `_turn` keeps it)
        texts = [block.text for block in blocks if isinstance(block, TextContent)]
        session.add(UserMessage(parts=[TextPart(text=text) for text in texts]))
        _keep_prompt(session, blocks)
    session.add(AssistantMessage(text=scrub("".join(call.shown)), message_id=call.message_id))
    for text in call.shown:
        session.transcript_keep(AgentMessageChunk(content=TextContent(text=text), message_id=call.message_id))


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
