"""Session updates drawn in a terminal with rich: the one rendering of updates, live (`coder-agent run`) or
stored (`coder-agent sessions show`).

Agent text streams into a live preview (the tail of the message, as Markdown) and is printed as Markdown
once the message is complete; thoughts likewise, dimmed; a user's prompt (only stored sessions hold them) as
quoted lines. A tool call shows its diff when it is announced, a spinner while it runs (a command's latest
output lines under it, live, when the run's own terminals are watched: `terminal_output`), then one line with
its outcome (and a command's output, a failure's message). A compaction shows what it freed. When stdout is not
a terminal, or the updates are stored ones, nothing is animated: each piece is printed once it is complete.

Everything is drawn from the event loop's thread, `animate` included: rich's own refresh thread would race
with the prints made here (rich's console is not thread-safe, Textualize/rich#1530), and the two would each
move the cursor from the same place, erasing or repeating lines.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import anyio
from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.live import Live
from rich.markdown import Markdown
from rich.markup import escape
from rich.segment import Segment
from rich.spinner import Spinner
from rich.text import Text

from ..acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    ContentBlock,
    ContentToolCallContent,
    DiffContent,
    EmbeddedResource,
    PlanUpdate,
    ResourceLink,
    SessionUpdate,
    TerminalContent,
    TextContent,
    ToolCallContent,
    ToolCallFields,
    ToolCallProgress,
    ToolCallStart,
    UserMessageChunk,
)
from ..agent.sessions.repair import COMPACTION_PREFIX
from .blocks import diff_text, output_tail, plan_checklist, summary_line
from .output import RunResult, TerminalOutput

_SHORT_SUMMARY = 100  # a read's or search's one-line result is shown after its title up to this length
_REFRESH_INTERVAL = 0.1  # seconds between two redraws of the live area


@dataclass
class _Block:
    """Streamed text of one message (or one thought), until it is complete."""

    kind: str  # "message" | "thought" | "prompt"
    message_id: str | None
    parts: list[str] = field(default_factory=list)

    def renderable(self, terminal: bool) -> RenderableType:
        """Markdown on a terminal; elsewhere (a pipe, a file) the text as the model wrote it."""
        if self.kind == "prompt":  # one part per content block of the prompt
            lines = " ".join(self.parts).splitlines() or [""]
            return Text("\n" + "\n".join(f"> {line}" for line in lines))
        text = "".join(self.parts)
        if self.kind == "thought":  # dimmed on a terminal; marked where there is no style
            shown = text if terminal else "\n".join(f"(thinking) {line}" for line in text.strip().splitlines())
            return Text(shown, style="dim italic")
        return Markdown(text) if terminal else Text(text)


def block_text(block: ContentBlock) -> str:
    """A prompt's content block as a line of text: its text, or what it names (`@a.py`)."""
    if isinstance(block, TextContent):
        return block.text
    if isinstance(block, ResourceLink):
        return f"@{block.name or block.uri}"
    if isinstance(block, EmbeddedResource):
        return f"@{block.resource.uri}"
    return f"[{block.type}]"


@dataclass
class _Call:
    title: str
    kind: str
    diffs_shown: set[str] = field(default_factory=set)
    finished: bool = False
    terminal: str | None = None  # the terminal it runs in, when the run watches its output live


LIVE_OUTPUT_LINES = 6  # of a running command, under its spinner


def _texts(content: list[ToolCallContent] | None) -> list[str]:
    return [
        item.content.text
        for item in content or []
        if isinstance(item, ContentToolCallContent) and isinstance(item.content, TextContent)
    ]


class _LiveView:
    """The live area: the tail of the text being streamed, a spinner per running tool call, then a blank line.

    The blank line is where the cursor rests. What the terminal echoes there (`^C` when the user interrupts)
    is erased with the area; at the end of a full-width line it would wrap onto a new line instead, and the
    next redraw, starting from one line too low, would leave the area's first line behind on the screen.
    """

    def __init__(self) -> None:
        self.block: _Block | None = None
        self.running: dict[str, Spinner] = {}  # tool call id -> its spinner
        self.outputs: dict[str, Callable[[], str | None]] = {}  # tool call id -> its command's output so far

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        block, running = self.block, list(self.running.items())
        tails = {call: _last_lines(self.outputs[call]()) for call, _ in running if call in self.outputs}
        if block is not None:
            room = max(console.size.height - len(running) - sum(map(len, tails.values())) - 2, 3)
            lines = console.render_lines(block.renderable(terminal=True), options, pad=False)
            for line in lines[-room:]:
                yield from line
                yield Segment.line()
        for call, spinner in running:
            yield spinner
            for printed in tails.get(call, []):
                yield Text(f"  {printed}", style="dim", no_wrap=True, overflow="ellipsis")
        yield Segment(" ")  # a line of its own: a trailing newline alone would not count as one


def _last_lines(output: str | None) -> list[str]:
    """The last lines a command printed, as a terminal shows them (a progress bar's `\r`: its latest state)."""
    lines = [line.rsplit("\r", 1)[-1] for line in (output or "").replace("\r\n", "\n").rstrip("\n").split("\n")]
    return [line for line in lines if line.strip()][-LIVE_OUTPUT_LINES:]


def _ended(raw: object) -> str:
    """How a command that did not end well ended, from the call's raw output ("" when it exited 0)."""
    if not isinstance(raw, dict):
        return ""
    if raw.get("timed_out"):
        return "(timed out; the command was killed)"
    if raw.get("signal"):
        return f"(killed by {raw['signal']})"
    code = raw.get("exit_code")
    return f"(exit code {code})" if code not in (0, None) else ""


class RichOutput:
    def __init__(
        self,
        console: Console,
        errors: Console,
        cwd: str,
        live: bool = True,
        terminal_output: TerminalOutput | None = None,
    ) -> None:
        """`live`: draw a live area (streamed text, spinners) when `console` is a terminal; `terminal_output`:
        how to read the run's own terminals (their output is then shown as it comes)."""
        self._console = console
        self._errors = errors
        self._cwd = cwd
        self._terminal_output = terminal_output
        self._animated = live and console.is_terminal
        self._view = _LiveView()
        self._calls: dict[str, _Call] = {}
        self._live: Live | None = None

    # ---- the live area --------------------------------------------------------------------------------

    def _animate(self) -> None:
        if self._live is None and self._animated:
            live = Live(self._view, console=self._console, auto_refresh=False, transient=True, redirect_stderr=False)
            self._live = live
            live.start(refresh=True)

    def refresh(self) -> None:
        """Redraw the live area (the text streamed so far, the spinners' next frame), if it is shown."""
        if self._live is not None:
            self._live.refresh()

    async def animate(self) -> None:
        while True:
            await anyio.sleep(_REFRESH_INTERVAL)
            self.refresh()

    def _stop(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None

    def _close_block(self) -> None:
        block, self._view.block = self._view.block, None
        if block is not None and "".join(block.parts).strip():
            self._console.print(block.renderable(self._console.is_terminal))
            if block.kind == "thought":
                self._console.print()

    # ---- Output ---------------------------------------------------------------------------------------

    @property
    def live_terminals(self) -> bool:
        return self._animated  # a terminal: a command's output can be redrawn as it comes

    def watch_terminals(self, read: TerminalOutput) -> None:
        """`read(terminal id, done)`: what the terminal printed so far (all of it, and forgotten, once `done`)."""
        self._terminal_output = read

    def init(self, info: dict[str, object]) -> None:
        return  # the summary line names the session at the end

    def update(self, update: SessionUpdate) -> None:
        if isinstance(update, AgentMessageChunk | AgentThoughtChunk):
            if isinstance(update.content, TextContent):
                kind = "message" if isinstance(update, AgentMessageChunk) else "thought"
                self._stream(kind, update.message_id, update.content.text)
            return
        if isinstance(update, UserMessageChunk):
            self._stream("prompt", update.message_id, block_text(update.content))
            return
        self._close_block()
        if isinstance(update, ToolCallStart):
            self._start_call(update)
        elif isinstance(update, ToolCallProgress):
            self._progress(update)
        elif isinstance(update, PlanUpdate):
            self._console.print(plan_checklist(update.entries))

    def _stream(self, kind: str, message_id: str | None, text: str) -> None:
        block = self._view.block
        if block is None or block.kind != kind or block.message_id != message_id:
            self._close_block()
            block = self._view.block = _Block(kind, message_id)
        block.parts.append(text)
        self._animate()

    def _start_call(self, start: ToolCallStart) -> None:
        call = self._calls[start.tool_call_id] = _Call(start.title, start.kind)
        if start.status in ("completed", "failed"):
            self._finish(start.tool_call_id, call, start.status, start.content)
            return
        diffs = [item for item in start.content if isinstance(item, DiffContent)]
        if diffs:
            self._console.print(Text.assemble(("● ", "cyan"), (call.title, "bold")))
            self._print_diffs(call, diffs)
        if start.status == "in_progress":
            self._spin(start.tool_call_id, call)

    def _progress(self, update: ToolCallProgress) -> None:
        call = self._calls.setdefault(update.tool_call_id, _Call(update.title or "tool call", update.kind or "other"))
        if update.title:
            call.title = update.title
        terminal = next((item.terminal_id for item in update.content or [] if isinstance(item, TerminalContent)), None)
        if terminal is not None and self._terminal_output is not None and call.terminal is None:
            call.terminal = terminal
            read = self._terminal_output
            self._view.outputs[update.tool_call_id] = lambda: read(terminal, False)
            self._spin(update.tool_call_id, call)
        if update.status == "in_progress":
            self._spin(update.tool_call_id, call)
        elif update.status in ("completed", "failed"):
            self._finish(update.tool_call_id, call, update.status, update.content, update.raw_output)

    def _spin(self, call_id: str, call: _Call) -> None:
        self._view.running[call_id] = Spinner("dots", Text(call.title), style="cyan")
        self._animate()

    def _print_diffs(self, call: _Call, diffs: list[DiffContent]) -> None:
        for diff in diffs:
            key = f"{diff.path}\0{diff.old_text}\0{diff.new_text}"
            if key not in call.diffs_shown:
                call.diffs_shown.add(key)
                self._console.print(diff_text(diff, self._cwd), end="")

    def _finish(
        self, call_id: str, call: _Call, status: str, content: list[ToolCallContent] | None, raw: object = None
    ) -> None:
        self._view.running.pop(call_id, None)
        self._view.outputs.pop(call_id, None)
        call.finished = True
        texts = _texts(content)
        if call.terminal is not None and self._terminal_output is not None:  # its output, read from the terminal
            texts = [text for text in [self._terminal_output(call.terminal, True) or "", _ended(raw)] if text.strip()]
        if call_id.startswith(COMPACTION_PREFIX) and texts:  # what it freed (the summary is for the model)
            done = status == "completed"
            mark, label = (("✓ ", "green"), "Compacted the conversation") if done else (("✗ ", "red"), "Compaction")
            self._console.print(Text.assemble(mark, (label, "bold"), (f"  {texts[0]}", "dim")))
            return
        if status == "failed":
            self._console.print(Text.assemble(("✗ ", "red"), (call.title, "bold")))
            for text in texts:
                self._console.print(output_tail(text, limit=12, style="red"), end="")
            return
        if call.kind == "think":  # the plan tool: its plan is shown already
            return
        line = Text.assemble(("✓ ", "green"), (call.title, "bold"))
        short = texts[0] if len(texts) == 1 and "\n" not in texts[0] else None
        if call.kind != "execute" and short and len(short) <= _SHORT_SUMMARY:
            line.append(f"  {short}", style="dim")
        self._console.print(line)
        self._print_diffs(call, [item for item in content or [] if isinstance(item, DiffContent)])
        if call.kind == "execute":
            for text in texts:
                self._console.print(output_tail(text), end="")

    def permission(self, tool_call: ToolCallFields, option_id: str | None, note: str) -> None:
        self._close_block()
        title = tool_call.title or "tool call"
        self._console.print(f"[yellow]![/] [bold]{escape(title)}[/]: [yellow]{escape(note)}[/]")
        for text in _texts(tool_call.content):  # what it would have done (a project's MCP servers: their commands)
            self._console.print(output_tail(text, limit=12), end="")

    def notice(self, text: str) -> None:
        self._console.print(f"[yellow]{escape(text)}[/]")

    def aside(self, text: str) -> None:
        """A dimmed line of our own between the updates (a mode change in a stored session, say)."""
        self._close_block()
        self._console.print(Text(text, style="dim"))

    def unfinished(self) -> None:
        """Close what is open, and list the tool calls that never finished (a stored session that stopped)."""
        self._close_block()
        for call in self._calls.values():
            if not call.finished:
                self._console.print(Text.assemble(("● ", "yellow"), (call.title, "bold"), ("  (not finished)", "dim")))

    @contextmanager
    def paused(self) -> Iterator[None]:
        self._close_block()
        self._stop()
        try:
            yield
        finally:
            if self._view.running:
                self._animate()

    def result(self, result: RunResult) -> None:
        self._close_block()
        self._stop()
        self._console.print(summary_line(result))

    def close(self) -> None:
        self._stop()

    def error(self, message: str, session_id: str | None = None) -> None:
        self._close_block()
        self._stop()
        self._errors.print(f"[bold red]error:[/] {escape(message)}")
        if session_id is not None:
            self._errors.print(f"[dim]   session {session_id}[/]")
