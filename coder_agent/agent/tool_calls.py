"""Running the tool calls of one model response: prepare, show, ask, run, report, and answer the model.

Every call the model makes is shown to the editor (`tool_call`, then `tool_call_update`s) and answered in
the history (`ToolMessage`), whatever happens to it: invalid arguments, a refusal, a failure, cancellation.
Consecutive read-only calls run concurrently; everything else runs one at a time, in order.

The model never reads a secret the agent knows (`masking`): a command that prints the environment or cats a
`.env` answers with `[secret NAME]` in place of each key. The provider need not be the key's (an OpenAI key in
the environment of a session on Anthropic), and a model that never had a key can neither write it into a file or
a command nor stream it back split across chunks, where no sink could see it whole. So that this loses nothing,
an edit that would put a mask where the file holds the key is refused (`_masks_written`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
from pydantic import ValidationError

from ..acp.schema import (
    SessionUpdate,
    TerminalContent,
    ToolCallContent,
    ToolCallFields,
    ToolCallProgress,
    ToolCallStart,
    ToolCallStatus,
)
from ..kit.masking import mask, replaced_by_masks
from ..llm.messages import ToolCallRequest, ToolMessage
from . import tool_permission
from .client import Client
from .diagnostics import Edit
from .errors import ClientError
from .permissions.gate import Decision
from .sessions.session import Session, new_id
from .tools.base import Intent, Tool, ToolContext, ToolError, ToolResult, text_content
from .tools.problems import check_edits
from .workspace.changes import Watch
from .workspace.files import Files
from .workspace.turn_files import CommandChange, TurnFiles, change_content, change_locations, for_model

log = logging.getLogger(__name__)

MAX_OUTPUT_CHARS = 60_000
CANCELLED = "Cancelled: the user stopped the turn before this call finished."
SETTLE_TIMEOUT = 5.0
CHANGES_TIMEOUT = 15.0  # to see and report what a call changed, even after a cancel


@dataclass
class _Call:
    request: ToolCallRequest
    acp_id: str
    announced: bool = False
    answer: str | None = None  # what the model will read; None until the call is settled


def _capped(text: str, limit: int = MAX_OUTPUT_CHARS) -> str:
    """At most `limit` characters: the start and the end, and a note of the cut in the middle."""
    if len(text) <= limit:
        return text
    half = limit // 2
    note = (
        f"[{len(text) - limit} characters cut here, to fit the model's context window. For the missing part, "
        "run it again with narrower output (a filter, a range of lines) or read the file in parts.]"
    )
    return f"{text[:half]}\n... {note} ...\n{text[-half:]}"


class ToolCallRunner:
    def __init__(
        self,
        session: Session,
        client: Client,
        tools: Mapping[str, Tool[Any]],
        *,
        output_chars: int = MAX_OUTPUT_CHARS,  # the longest result the model is given (a share of its window)
        turn_files: TurnFiles | None = None,
    ) -> None:
        self._session = session
        self._client = client
        self._tools = tools
        self._output_chars = min(output_chars, MAX_OUTPUT_CHARS)
        self._files = Files(client, session.id)
        self._turn_files = turn_files

    async def run_all(self, requests: Sequence[ToolCallRequest]) -> None:
        calls = [_Call(request, new_id("call")) for request in requests]
        try:
            batch: list[_Call] = []
            for call in calls:
                tool = self._tools.get(call.request.name)
                if tool is not None and tool.read_only:
                    batch.append(call)
                    continue
                await self._run_batch(batch)
                batch = []
                await self._run(call)
            await self._run_batch(batch)
        finally:
            # Every call's answer goes into the history first: nothing that can fail may come between a call
            # and its answer. Only then is the editor told about the calls that never finished.
            unfinished = self._answer_all(calls)
            with anyio.CancelScope(shield=True), anyio.move_on_after(SETTLE_TIMEOUT):
                await self._show_cancelled(unfinished)

    async def _run_batch(self, batch: list[_Call]) -> None:
        if len(batch) == 1:
            await self._run(batch[0])
        elif batch:
            async with anyio.create_task_group() as tg:
                for call in batch:
                    tg.start_soon(self._run, call)

    def _answer_all(self, calls: list[_Call]) -> list[_Call]:
        """Put every call's answer in the history (unfinished ones: cancelled); returns the unfinished ones."""
        unfinished = [call for call in calls if call.answer is None]
        for call in calls:
            answer = mask(call.answer) if call.answer else CANCELLED
            self._session.add(ToolMessage(tool_call_id=call.request.id, content=answer))
        return unfinished

    async def _show_cancelled(self, unfinished: list[_Call]) -> None:
        for call in unfinished:
            if call.announced:
                try:
                    await self._update(call, status="failed", content=[text_content("Cancelled")])
                except Exception as exc:  # the client is gone or broken: the history is whole regardless
                    log.info("could not show %s as cancelled: %s", call.acp_id, exc)

    async def _update(self, call: _Call, **fields: Any) -> None:
        await self._session.publish(ToolCallProgress(tool_call_id=call.acp_id, **fields))

    async def _emit(self, update: SessionUpdate) -> None:
        await self._session.publish(update)

    async def _fail(self, call: _Call, message: str, shown: str | None = None, tool: Tool[Any] | None = None) -> None:
        """The call failed: the model reads `message`, the user sees `shown` (default: the same)."""
        call.answer = message  # first: the history needs it even if the editor cannot be told
        content: list[ToolCallContent] = [text_content(shown if shown is not None else message)]
        if not call.announced:
            call.announced = True
            start = ToolCallStart(
                tool_call_id=call.acp_id,
                title=tool.title if tool is not None else f"Unknown tool {call.request.name}",
                kind=tool.kind if tool is not None else "other",
                raw_input=_raw_arguments(call.request),
                status="failed",
                content=content,
            )
            await self._emit(start)
        else:
            await self._update(call, status="failed", content=content)

    async def _run(self, call: _Call) -> None:
        request = call.request
        tool = self._tools.get(request.name)
        if tool is None:
            available = ", ".join(sorted(self._tools))
            await self._fail(call, f"Unknown tool {request.name!r}. Available tools: {available}.", "Unknown tool")
            return
        try:
            arguments = json.loads(request.arguments or "{}")
            if not isinstance(arguments, dict):
                raise ValueError("the arguments must be a JSON object")
            args = tool.parse(arguments)
        except (ValueError, ValidationError) as exc:
            await self._fail(call, f"Invalid arguments for {request.name}: {exc}", f"Invalid arguments: {exc}", tool)
            return
        ctx = self._context(call)
        try:
            intent = await tool.prepare(args, ctx)
        except (ToolError, OSError) as exc:
            await self._fail(call, str(exc), tool=tool)
            return
        except ClientError as exc:  # the editor failed or answered nonsense while we looked (a read)
            await self._fail(call, f"{request.name} failed: {exc.message}", tool=tool)
            return
        except Exception as exc:
            log.exception("tool %s crashed while preparing", request.name)
            await self._fail(
                call, f"{request.name} failed with an internal error: {type(exc).__name__}: {exc}", tool=tool
            )
            return
        if (refused := _masks_written(intent, ctx)) is not None:
            await self._fail(call, refused, tool=tool)
            return
        if ctx.diagnostics is not None:  # while the user looks at the diff, its server starts and looks at the file
            for change in intent.changes:
                ctx.diagnostics.expect(change.path, change.old_text)
        shown = ToolCallFields(
            tool_call_id=call.acp_id,
            title=intent.title,
            kind=intent.kind,
            status="pending",
            content=intent.content,
            locations=intent.locations,
            raw_input=arguments,
        )
        await self._announce(call, shown)
        refusal = await self._authorize(tool, intent, shown)
        if refusal is not None:
            await self._fail(call, *refusal)
            return
        await self._update(call, status="in_progress")
        # A call that runs code (a command, an MCP tool) may change files behind the edit tools' back: look.
        watch = await self._watch() if intent.effect == "execute" else None
        try:
            result = await tool.run(args, intent, ctx)
        except (ToolError, OSError, ClientError) as exc:
            message = exc.message if isinstance(exc, ClientError) else str(exc)
            await self._fail(call, f"{request.name} failed: {message}", tool=tool)
            return
        except Exception as exc:
            log.exception("tool %s crashed", request.name)
            await self._fail(
                call, f"{request.name} failed with an internal error: {type(exc).__name__}: {exc}", tool=tool
            )
            return
        else:
            await self._finish(call, result)
        finally:
            if watch is not None:
                with anyio.CancelScope(shield=True), anyio.move_on_after(CHANGES_TIMEOUT):
                    await self._report_changes(call, tool, watch, ctx)

    async def _watch(self) -> Watch | None:
        if self._turn_files is None:
            return None
        try:
            return await self._turn_files.watch()
        except Exception:  # seeing changes must never stop the call itself
            log.exception("could not look at the files before the call")
            return None

    async def _report_changes(self, call: _Call, tool: Tool[Any], watch: Watch, ctx: ToolContext) -> None:
        """Show the files the call changed as an edit of their own, and tell the model."""
        assert self._turn_files is not None
        try:
            changes = await self._turn_files.seen_by(watch)
        except Exception:
            log.exception("could not see what the call changed")
            return
        if not changes:
            return
        names = ", ".join(ctx.display(change.path) for change in changes)
        report = ToolCallStart(
            tool_call_id=new_id("call"),
            title=f"Changed by {tool.title.lower()}: {names}",
            kind="edit",
            status="completed",
            content=change_content(changes),
            locations=change_locations(changes),
        )
        call.answer = f"{call.answer or ''}\n{for_model(changes, ctx.display)}".lstrip("\n")
        try:
            await self._emit(report)
        except ClientError as exc:
            log.info("could not show the changed files: %s", exc.message)
        checked = await check_edits(ctx.diagnostics, [_edit_of(change) for change in changes], ctx.display)
        if checked is not None:
            call.answer = f"{call.answer}\n{checked}"

    def _context(self, call: _Call) -> ToolContext:
        async def progress(content: list[ToolCallContent]) -> None:
            # Live-only: a terminal cannot be replayed later; the final update carries its output as text.
            await self._session.publish(ToolCallProgress(tool_call_id=call.acp_id, content=content), keep=False)

        session = self._session
        turn_files = self._turn_files
        before_write = turn_files.before_edit if turn_files is not None else _nothing
        after_write = turn_files.after_edit if turn_files is not None else None
        return ToolContext(
            session.id,
            session.cwd,
            session.roots,
            self._client,
            self._files,
            self._emit,
            progress,
            before_write,
            after_write=after_write,
            tool_call_id=call.acp_id,
            runs_unasked=lambda name, intent: self._decide(name, intent).action == "allow",
            diagnostics=session.diagnostics,
        )

    async def _announce(self, call: _Call, shown: ToolCallFields) -> None:
        call.announced = True
        await self._emit(ToolCallStart(**dict(shown)))

    def _decide(self, tool: str, intent: Intent) -> Decision:
        return tool_permission.decide_call(self._session, tool, intent)

    async def _authorize(self, tool: Tool[Any], intent: Intent, shown: ToolCallFields) -> tuple[str, str] | None:
        return await tool_permission.authorize(self._client, self._session, tool.name, intent, shown)

    async def _finish(self, call: _Call, result: ToolResult) -> None:
        content = result.content or [text_content(_capped(result.output))]
        status: ToolCallStatus = "failed" if result.failed else "completed"
        update = ToolCallProgress(
            tool_call_id=call.acp_id, status=status, content=content, raw_output=result.raw_output
        )
        replay_as = None
        if any(isinstance(item, TerminalContent) for item in content):
            # The terminal is gone by the time a session is replayed: keep its output as text.
            replay_as = update.model_copy(update={"content": [text_content(_capped(result.output))]})
        # First: the history needs it regardless. Masked before the cut, which could otherwise halve a key.
        call.answer = _capped(mask(result.output), self._output_chars)
        await self._session.publish(update, replay_as=replay_as)


def _masks_written(intent: Intent, ctx: ToolContext) -> str | None:
    """Why the intent's edits are refused, if one would write a mask where its file holds the key (the model
    copied text it read masked): None when none would."""
    for change in intent.changes:
        masks = replaced_by_masks(change.old_text or "", change.new_text or "")
        if masks:
            return (
                f"Not written: {ctx.display(change.path)} holds keys that you read masked as {', '.join(masks)}; "
                "this edit would put the masks in their place and lose the keys. Leave the masked lines as they "
                "are: edit the other lines with edit_file, an old_string that does not include a mask."
            )
    return None


def _edit_of(change: CommandChange) -> Edit:
    """A command's change of a file as an edit: its texts, where both sides were read and are text."""
    before, after = change.before, change.after
    old = before.data.decode("utf-8", "replace") if before.data is not None else None
    new = after.data.decode("utf-8", "replace") if after.data is not None else None
    if (before.exists and old is None) or (after.exists and new is None):  # not read (too large, a link)
        return Edit(change.path, None, None)
    return Edit(change.path, old, new)


def _internal(tool: str, exc: Exception) -> str:
    return f"{tool} failed with an internal error: {type(exc).__name__}: {exc}"


def _nothing(path: str, old: str | None, new: str | None) -> None:
    return None


def _raw_arguments(request: ToolCallRequest) -> Any:
    try:
        return json.loads(request.arguments or "{}")
    except ValueError:
        return {"arguments": request.arguments}
