"""`run_command`: a shell command, in a terminal of the client's (the editor's, or a local process group).

The command runs as `/bin/sh -c COMMAND` (pipes, `&&`, redirections work). When the editor shows the terminal
the user watches it live: it is embedded in the tool call as soon as it exists; otherwise its output is shown
once the command is done. The terminal is always released, even when the turn is cancelled. A non-zero exit
is a normal result the model must read; the call only fails when the command could not start or ran out of time.
"""

from __future__ import annotations

import logging
import re

import anyio
from pydantic import Field

from ...acp.schema import TerminalContent, TerminalExitStatus, TerminalOutputResponse, ToolCallContent
from ..client import dropped_bytes
from ..errors import ClientError
from .base import Intent, Tool, ToolArgs, ToolContext, ToolError, ToolResult, fenced, text_content

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 120.0
MAX_TIMEOUT = 1800.0
OUTPUT_LIMIT = 30_000  # bytes of output kept (the end), for the model and the terminal
TITLE_LENGTH = 120
CLEANUP_TIMEOUT = 5.0
SHELL = "/bin/sh"  # no profile scripts to slow it down or print into its output (as `bash -lc` would)


class RunCommandArgs(ToolArgs):
    command: str = Field(
        min_length=1, description="The command line, run by /bin/sh -c (pipes, && and redirections work)"
    )
    cwd: str | None = Field(
        default=None,
        description="Directory to run in: absolute, or relative to the session's working directory (the default)",
    )
    timeout: float = Field(
        default=DEFAULT_TIMEOUT, gt=0, le=MAX_TIMEOUT, description="Seconds before the command is killed"
    )


def short_title(command: str) -> str:
    """The command on one line, cut to about `TITLE_LENGTH` characters."""
    line = re.sub(r"\s+", " ", command).strip()
    return line if len(line) <= TITLE_LENGTH else line[: TITLE_LENGTH - 1] + "…"


def as_shown(output: str) -> str:
    """Output as a terminal shows it: CRLF as LF, and a line rewritten after a bare CR (a progress bar) as its end."""
    if "\r" not in output:
        return output
    lines = []
    for line in output.replace("\r\n", "\n").split("\n"):
        shown = ""
        for piece in line.split("\r"):
            shown = piece + shown[len(piece) :]
        lines.append(shown)
    return "\n".join(lines)


def keep_end(text: str, limit: int) -> tuple[str, bool]:
    return (text, False) if len(text) <= limit else (text[-limit:], True)


def status_line(exit_code: int | None, signal: str | None, timed_out: bool, timeout: float) -> str:
    if timed_out:
        return f"Timed out after {timeout:g} s; the command was killed."
    if signal:
        return f"Killed by {signal}."
    return "Exit status unknown." if exit_code is None else f"Exit code {exit_code}."


def summary(
    exit_code: int | None, signal: str | None, timed_out: bool, timeout: float, truncated: str | None, output: str
) -> str:
    """What the model reads: how the command ended, a truncation note, then the output."""
    parts = [status_line(exit_code, signal, timed_out, timeout)]
    if truncated:
        parts.append(truncated)
    parts.append(output.rstrip("\n") if output.strip() else "(no output)")
    return "\n".join(parts)


class RunCommand(Tool[RunCommandArgs]):
    name = "run_command"
    title = "Run command"
    kind = "execute"
    args_model = RunCommandArgs
    read_only = False

    def __init__(self, output_limit: int = OUTPUT_LIMIT) -> None:
        self.output_limit = output_limit

    async def _cwd(self, args: RunCommandArgs, ctx: ToolContext) -> str:
        cwd = ctx.resolve(args.cwd) if args.cwd else ctx.cwd
        if not await anyio.Path(cwd).is_dir():
            raise ToolError(f"cwd {args.cwd or cwd} is not an existing directory")
        return cwd

    async def prepare(self, args: RunCommandArgs, ctx: ToolContext) -> Intent:
        cwd = await self._cwd(args, ctx)
        title = short_title(args.command)
        shown = [] if title == args.command and cwd == ctx.cwd else [fenced(args.command)]
        if cwd != ctx.cwd:
            shown.append(f"in `{ctx.display(cwd)}`")
        return Intent(
            title=title,
            kind="execute",
            effect="execute",
            command=args.command,
            content=[text_content("\n".join(shown))] if shown else [],
        )

    async def run(self, args: RunCommandArgs, intent: Intent, ctx: ToolContext) -> ToolResult:
        cwd = await self._cwd(args, ctx)
        client, session = ctx.client, ctx.session_id
        try:
            # Shielded: a terminal created while we were cancelled would never be released.
            with anyio.CancelScope(shield=True):
                terminal = await client.create_terminal(
                    session, SHELL, ["-c", args.command], cwd=cwd, output_byte_limit=self.output_limit
                )
        except OSError as exc:
            raise ToolError(f"could not start the command: {exc}") from exc
        except ClientError as exc:
            raise ToolError(f"the editor could not start the command: {exc.message}") from exc
        shown = client.shows_terminal(terminal)
        finished = False
        try:
            if shown:  # the user watches it run
                await ctx.progress([TerminalContent(terminal_id=terminal)])
            status: TerminalExitStatus | None = None
            with anyio.move_on_after(args.timeout) as deadline:
                status = await client.wait_for_terminal_exit(session, terminal)
            if deadline.cancelled_caught:
                await client.kill_terminal(session, terminal)
            result = await client.terminal_output(session, terminal)
            finished = True
        except ClientError as exc:
            raise ToolError(f"the editor's terminal failed: {exc.message}") from exc
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(CLEANUP_TIMEOUT):
                await _release(ctx, terminal, kill_first=not finished)
        status = status or result.exit_status or TerminalExitStatus()
        return self._result(args, terminal if shown else None, status, result, timed_out=deadline.cancelled_caught)

    def _result(
        self,
        args: RunCommandArgs,
        shown_terminal: str | None,
        status: TerminalExitStatus,
        result: TerminalOutputResponse,
        timed_out: bool,
    ) -> ToolResult:
        """What the model reads, and what the user sees: the terminal they watched, or the output now."""
        output, cut = keep_end(as_shown(result.output), self.output_limit)
        dropped = dropped_bytes(result)
        note = None
        if result.truncated or cut:
            what = f"the first {dropped} bytes were dropped" if dropped else "only the end is shown"
            note = f"(output truncated: {what})"
        raw: dict[str, object] = {"exit_code": status.exit_code, "signal": status.signal, "timed_out": timed_out}
        if dropped is not None:
            raw["dropped_bytes"] = dropped
        content: list[ToolCallContent] = []
        if shown_terminal is not None:
            content.append(TerminalContent(terminal_id=shown_terminal))
        else:
            shown = [fenced(output)] if output.strip() else []
            if status.exit_code != 0:  # the editor shows the call as completed: say how it ended
                shown.append(status_line(status.exit_code, status.signal, timed_out, args.timeout))
            content.extend([text_content("\n".join(shown))] if shown else [])
        return ToolResult(
            output=summary(status.exit_code, status.signal, timed_out, args.timeout, note, output),
            content=content,
            raw_output=raw,
            failed=timed_out,
        )


async def _release(ctx: ToolContext, terminal: str, kill_first: bool) -> None:
    """Kill (when the command may still run) and release the terminal; a failure is logged, not raised."""
    steps = [ctx.client.kill_terminal, ctx.client.release_terminal] if kill_first else [ctx.client.release_terminal]
    for step in steps:
        try:
            await step(ctx.session_id, terminal)
        except Exception:
            logger.warning("terminal %s: %s failed", terminal, step.__name__, exc_info=True)
