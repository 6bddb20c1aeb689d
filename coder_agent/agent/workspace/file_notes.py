"""The agent's own notes about the user's files, as the user reads them: which files a turn changed, and what
an `/undo` or a `/rewind` put back.

Each note is Markdown that starts a paragraph of its own. Most clients join a turn's message chunks into one
text whatever their message ids (Toad, acpx, acp-client), so a note that began right after the model's last
word would be glued to it ("SHELL-DONEChanged 3 files"), or read as more rows of a table the model ended with.
The leading blank line ends whatever came before; the files are a list, named relative to the session's folder
(`display`), each in code spans so that a name with Markdown in it shows as it is.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from .checkpoints import Changed, what_changed
from .undo import UndoReport

PARAGRAPH = "\n\n"  # what a note starts with: the end of whatever paragraph (or table) came before


def relative_to(cwd: str) -> Callable[[str], str]:
    """`path` relative to the session's folder when it is inside it, else as it is (absolute)."""
    prefix = cwd.rstrip(os.sep) + os.sep

    def display(path: str) -> str:
        return path[len(prefix) :] if path.startswith(prefix) else path

    return display


def code(text: str) -> str:
    """`text` as a Markdown code span, whatever backticks it holds (CommonMark: a longer fence, padded)."""
    fence = "`"
    while fence in text:
        fence += "`"
    padded = f" {text} " if text.startswith("`") or text.endswith("`") else text
    return f"{fence}{padded}{fence}"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' if count != 1 else ''}"


def changed_files_note(changes: Sequence[Changed], display: Callable[[str], str], problems: Sequence[str] = ()) -> str:
    """The turn's note: each file it changed with its `+added -removed` lines, and what kept the agent from
    seeing every change."""
    parts = []
    if changes:
        lines = [f"**Changed {_plural(len(changes), 'file')}**"]
        for change in changes:
            kind = f" ({change.kind})" if change.kind != "modified" else ""
            lines.append(f"- {code(display(change.path))} {what_changed(change)}{kind}")
        parts.append("\n".join(lines))
    if problems:
        parts.append("Not every change could be seen: " + "; ".join(problems) + ".")
    return PARAGRAPH + "\n\n".join(parts) if parts else ""


def undo_note(report: UndoReport, headline: str, display: Callable[[str], str], command: str = "/undo") -> str:
    """What an undo or a rewind did to the files: `headline`, then one line per file (`command` is what to type
    with `--force` to overwrite the files left alone). It answers a command of its own, with no model text
    before it: no leading blank line."""
    lines = [f"- restored {code(display(path))}" for path in report.restored]
    lines += [f"- deleted {code(display(path))} (the turn created it)" for path in report.deleted]
    lines += [
        f"- left {code(display(path))}: changed since (`{command} --force` overwrites it)"
        for path in report.changed_since
    ]
    lines += [f"- left {code(display(path))}: its earlier content was not kept" for path in report.not_kept]
    lines += [f"- left {code(display(path))}: {why}" for path, why in report.refused]
    return "\n".join([f"**{headline}**", *lines]) if lines else headline
