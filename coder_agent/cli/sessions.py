"""`coder-agent sessions`: list, show, export and delete the sessions saved in `$CODER_AGENT_HOME/sessions.db`.

This is the CLI's own output, so it goes to stdout. Problems go to stderr, with exit code 1 for an unknown
session, 2 for a store that cannot be used (corrupt, unreadable) or a bad command line, and 3 for a session
that is live in a running agent (`undo`). Before the agent has saved anything there is no store: `list` says
so, and nothing here creates one.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import functools
import json
import os
import sqlite3
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TextIO

from ..acp.schema import CurrentModeUpdate, PlanUpdate, SessionUpdate, UsageUpdate, UserMessageChunk
from ..agent.sessions.blobs import expand
from ..config.settings import Settings, SettingsError
from ..kit.masking import mask
from ..store.base import SessionRecord, StoreError
from ..store.sqlite import SqliteSessionStore

NOT_FOUND = 1
UNUSABLE = 2
BUSY = 3
Json = dict[str, Any]


class CliError(Exception):
    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


def store_path() -> Path:
    try:
        return Settings.load().home / "sessions.db"
    except SettingsError as exc:
        raise CliError(str(exc), UNUSABLE) from None


def open_store(path: Path) -> SqliteSessionStore:
    try:
        return SqliteSessionStore(path)
    except StoreError as exc:
        raise CliError(str(exc), UNUSABLE) from None


def find(store: SqliteSessionStore, session_id: str) -> SessionRecord:
    record = store.get(session_id)
    if record is None:
        raise CliError(f"unknown session {session_id} (see `coder-agent sessions list`)", NOT_FOUND)
    return record


def when(stamp: str) -> str:
    try:
        moment = datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return stamp
    return moment.astimezone(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")


def parse(body: bytes | str) -> Json:
    try:
        value = json.loads(body)
    except ValueError:
        value = None
    if isinstance(value, dict):
        return value
    return {"unreadable": body.decode("utf-8", "replace") if isinstance(body, bytes) else body}


def nothing_saved(args: argparse.Namespace, path: Path, out: TextIO) -> int:
    """No store yet (a fresh install, or another CODER_AGENT_HOME): no sessions, and none to find."""
    if args.command == "list":
        out.write("[]\n" if args.json else f"No saved sessions yet (the agent creates {path} for the first one).\n")
        return 0
    for session_id in args.ids if args.command == "delete" else [args.id]:
        sys.stderr.write(f"coder-agent: unknown session {session_id}: no sessions saved yet ({path} does not exist)\n")
    return NOT_FOUND


# ---- list, export, delete ----------------------------------------------------------------------------------


def last_turn(record: SessionRecord) -> Json | None:
    turn = record.state.get("last_turn")
    return turn if isinstance(turn, dict) else None


def how_it_ended(record: SessionRecord) -> str | None:
    """A short note when the session's last turn did not end normally ("error: ...", "cancelled"), else None."""
    turn = last_turn(record) or {}
    reason = turn.get("stop_reason")
    if reason in (None, "end_turn"):
        return None
    if reason == "error":
        return f"last turn failed: {turn.get('error') or 'unknown error'}"
    return f"last turn: {reason}"


def cmd_list(store: SqliteSessionStore, args: argparse.Namespace, out: TextIO) -> int:
    cwd = os.path.abspath(args.cwd) if args.cwd else None
    records, more = store.list(cwd, None, args.limit)
    if args.json:
        fields = [
            {**{k: v for k, v in dataclasses.asdict(record).items() if k != "state"}, "last_turn": last_turn(record)}
            for record in records
        ]
        out.write(json.dumps(fields, indent=2) + "\n")
        return 0
    if not records:
        out.write(f"No saved sessions{f' in {cwd}' if cwd else ''}.\n")
    for record in records:
        title = record.title or "(untitled)"
        ended = how_it_ended(record)
        out.write(f"{record.id}  {when(record.updated_at)}  {title}{f'  [{ended}]' if ended else ''}\n")
        out.write(f"    {record.cwd}\n")
    if more:
        out.write(f"(more sessions: raise --limit above {args.limit})\n")
    return 0


def cmd_export(store: SqliteSessionStore, args: argparse.Namespace, out: TextIO) -> int:
    record = find(store, args.id)
    lookup = functools.partial(store.blob, record.id)  # images are stored once, as blobs: put them back
    document = {
        "session": dataclasses.asdict(record),
        "messages": [parse(expand(body.encode(), lookup)) for body in store.messages(record.id)],
        "updates": [parse(expand(body, lookup)) for body in store.updates(record.id)],
    }
    text = json.dumps(document, ensure_ascii=False, indent=2) + "\n"
    if args.output:  # a file the user may share: no known secret in it, as on stdout (`cli.main` masks that)
        Path(args.output).write_text(mask(text), encoding="utf-8")
        out.write(f"Exported {record.id} to {args.output}\n")
    else:
        out.write(text)
    return 0


def cmd_delete(store: SqliteSessionStore, args: argparse.Namespace, out: TextIO) -> int:
    code = 0
    for session_id in args.ids:
        try:
            find(store, session_id)
        except CliError as exc:
            sys.stderr.write(f"coder-agent: {exc}\n")
            code = exc.code
            continue
        store.delete(session_id)
        out.write(f"Deleted {session_id}\n")
    from ..agent.workspace.snapshot_upkeep import prune

    prune(store.path.parent, store.roots())  # the snapshots of folders no session names any more
    return code


def cmd_undo(store: SqliteSessionStore, args: argparse.Namespace, out: TextIO) -> int:
    """What `/undo` does in an editor, from a shell: the files of the last turn(s) put back on disk. Not while the
    session is live in an agent: it would not hear of it (and its model would not either)."""
    import anyio

    from ..agent.sessions.live_locks import held_elsewhere
    from ..agent.sessions.notes import note, notes_from
    from ..agent.workspace.checkpoints import Checkpoints
    from ..agent.workspace.restore import Restore
    from ..agent.workspace.undo import undo

    record = find(store, args.id)
    if held_elsewhere(store.path.parent, record.id):
        raise CliError(
            f"session {record.id} is open in a running agent: undo it there (/undo), or close it first", BUSY
        )
    checkpoints = Checkpoints(store.checkpoints, record.id)
    restore = Restore([record.cwd, *record.additional_directories])
    report = anyio.run(lambda: undo(checkpoints, restore, args.turns, args.force))
    for path in report.restored:
        out.write(f"restored  {path}\n")
    for path in report.deleted:
        out.write(f"deleted   {path}\n")
    for path in report.changed_since:
        out.write(f"left      {path} (changed since; --force to overwrite)\n")
    for path in report.not_kept:
        out.write(f"left      {path} (its earlier content was not kept)\n")
    for path, why in report.refused:
        out.write(f"left      {path} ({why})\n")
    if report.nothing:
        out.write("Nothing to undo.\n")
        return 0
    notes = [*notes_from(record.state.get("notes")), note(report.for_model(), report.turns)]
    record.state = {**record.state, "notes": notes}
    store.save(record)  # the model hears of it with the session's next prompt
    return 1 if report.left else 0


# ---- show: the transcript, drawn from the stored updates as `coder-agent run` draws them live -------------------


def stored_updates(bodies: Iterable[bytes]) -> tuple[list[SessionUpdate], int]:
    """The stored updates that can be read, and how many cannot."""
    from pydantic import TypeAdapter, ValidationError

    adapter = TypeAdapter[SessionUpdate](SessionUpdate)
    updates: list[SessionUpdate] = []
    unreadable = 0
    for body in bodies:
        try:
            updates.append(adapter.validate_json(body))
        except ValidationError:
            unreadable += 1
    return updates, unreadable


def one_plan_per_turn(updates: list[SessionUpdate]) -> list[SessionUpdate]:
    """Each turn's plan once, where it first appeared, as it last stood: a turn rewrites it at every step."""
    shown: list[SessionUpdate] = []
    plan_at: int | None = None
    for update in updates:
        if isinstance(update, UserMessageChunk):
            plan_at = None
        elif isinstance(update, PlanUpdate):
            if plan_at is not None:
                shown[plan_at] = update
                continue
            plan_at = len(shown)
        shown.append(update)
    return shown


def cmd_show(store: SqliteSessionStore, args: argparse.Namespace, out: TextIO) -> int:
    from rich.console import Console
    from rich.text import Text

    from ..headless.render import RichOutput

    record = find(store, args.id)
    console = Console(file=out, highlight=False, soft_wrap=True)  # colours on a terminal, unless NO_COLOR is set
    forked = f" (forked from {record.parent_id})" if record.parent_id else ""
    console.print(Text(record.title or "(untitled)"))
    console.print(Text(f"{record.id}{forked} in {record.cwd}", style="dim"))
    console.print(Text(f"created {when(record.created_at)}, updated {when(record.updated_at)}", style="dim"))
    ended = how_it_ended(record)
    if ended:
        console.print(Text(ended))
    lookup = functools.partial(store.blob, record.id)  # images are stored once, as blobs: put them back
    updates, unreadable = stored_updates(expand(body, lookup) for body in store.updates(record.id))
    view = RichOutput(console, console, record.cwd, live=False)
    usage: UsageUpdate | None = None
    for update in one_plan_per_turn(updates):
        if isinstance(update, CurrentModeUpdate):
            view.aside(f"-- mode: {update.current_mode_id} --")
        elif isinstance(update, UsageUpdate):
            usage = update
        else:
            view.update(update)
    view.unfinished()
    if unreadable:
        view.aside(f"({unreadable} stored updates could not be read)")
    if usage is not None:
        spent = f", cost {usage.cost.amount} {usage.cost.currency}" if usage.cost else ""
        view.aside(f"context: {usage.used} of {usage.size} tokens{spent}")
    return 0


# ---- the command line -----------------------------------------------------------------------------------------


def positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="coder-agent sessions", description="The sessions saved by the agent.")
    commands = top.add_subparsers(dest="command", required=True)
    listing = commands.add_parser("list", help="newest first")
    listing.add_argument("--cwd", help="only sessions started in this folder")
    listing.add_argument("--limit", type=positive, default=50, help="at most this many (default 50)")
    listing.add_argument("--json", action="store_true", help="as JSON")
    listing.set_defaults(run=cmd_list)
    show = commands.add_parser("show", help="a readable transcript")
    show.add_argument("id")
    show.set_defaults(run=cmd_show)
    export = commands.add_parser("export", help="everything stored, as JSON")
    export.add_argument("id")
    export.add_argument("-o", "--output", help="write to this file instead of stdout")
    export.set_defaults(run=cmd_export)
    delete = commands.add_parser("delete", help="forget sessions for good")
    delete.add_argument("ids", nargs="+", metavar="ID")
    delete.set_defaults(run=cmd_delete)
    undo = commands.add_parser("undo", help="put back the files the session's last turn changed (as /undo does)")
    undo.add_argument("id")
    undo.add_argument("--turns", type=positive, default=1, help="undo this many turns that changed files")
    undo.add_argument("--force", action="store_true", help="also overwrite files changed since the turn")
    undo.set_defaults(run=cmd_undo)
    return top


def main(argv: list[str]) -> int:
    try:
        args = parser().parse_args(argv)
    except SystemExit as exc:  # --help, or a usage error already explained on stderr
        return exc.code if isinstance(exc.code, int) else UNUSABLE
    path: Path | None = None
    try:
        path = store_path()
        if not path.exists():  # opening the store would create it (and its folder)
            return nothing_saved(args, path, sys.stdout)
        store = open_store(path)
        try:
            code: int = args.run(store, args, sys.stdout)
        finally:
            store.close()
        sys.stdout.flush()
        return code
    except CliError as exc:
        sys.stderr.write(f"coder-agent: {exc}\n")
        return exc.code
    except (StoreError, sqlite3.Error) as exc:
        sys.stderr.write(f"coder-agent: cannot read the session store {path}: {exc}\n")
        return UNUSABLE
    except BrokenPipeError:  # the reader went away (`| head`): not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
