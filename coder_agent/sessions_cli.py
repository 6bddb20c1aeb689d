"""`coder-agent sessions`: list, show, export and delete the sessions saved in `$CODER_AGENT_HOME/sessions.db`.

This is the CLI's own output, so it goes to stdout. Problems go to stderr, with exit code 1 for an unknown
session and 2 for a store that cannot be used (corrupt, unreadable) or a bad command line. Before the agent
has saved anything there is no store: `list` says so, and nothing here creates one.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import difflib
import functools
import json
import os
import sqlite3
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TextIO

from .agent.blobs import expand
from .settings import Settings, SettingsError
from .store.base import SessionRecord, StoreError
from .store.sqlite import SqliteSessionStore

NOT_FOUND = 1
UNUSABLE = 2
PREVIEW_LINES = 6  # of a tool call's text output
DIFF_HEADS = ("---", "+++", "@@ ")
CHECKBOX = {"completed": "[x]", "in_progress": "[~]", "pending": "[ ]"}
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
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
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
    return code


# ---- show: the transcript, rebuilt from the stored updates ---------------------------------------------------


def block_text(block: Any) -> str:
    if not isinstance(block, dict):
        return ""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "resource_link":
        return f"@{block.get('name') or block.get('uri')}"
    if kind == "resource":
        return f"@{(block.get('resource') or {}).get('uri', 'resource')}"
    return f"[{kind}]"


def tool_content(item: Any) -> list[str]:
    kind = item.get("type") if isinstance(item, dict) else None
    if kind == "diff":
        old, new = (item.get("oldText") or "").splitlines(), str(item.get("newText", "")).splitlines()
        if item.get("oldText") is None:
            return [f"new file {item.get('path')} ({len(new)} lines)"]
        changed = [line[0] for line in difflib.unified_diff(old, new, n=0, lineterm="") if line[:3] not in DIFF_HEADS]
        return [f"edit {item.get('path')} (+{changed.count('+')} -{changed.count('-')} lines)"]
    if kind == "terminal":
        return ["(terminal output, shown live in the editor)"]
    lines = block_text(item.get("content")).splitlines() if kind == "content" else []
    more = [f"... {len(lines) - PREVIEW_LINES} more lines"] if len(lines) > PREVIEW_LINES else []
    return lines[:PREVIEW_LINES] + more


def transcript(updates: Iterable[Json]) -> tuple[list[list[Any]], Json | None]:
    """The updates folded into items (chunks joined, tool calls merged, one plan per turn), and the last usage."""
    items: list[list[Any]] = []
    tools: dict[str, Json] = {}
    plan: list[Any] | None = None
    usage: Json | None = None
    for update in updates:
        kind = update.get("sessionUpdate")
        if kind in ("user_message_chunk", "agent_message_chunk", "agent_thought_chunk"):
            key = (kind, update.get("messageId"))
            if not items or items[-1][0] != key:
                items.append([key, []])
                plan = None if kind == "user_message_chunk" else plan
            items[-1][1].append(block_text(update.get("content")))
        elif kind in ("tool_call", "tool_call_update"):
            call_id = str(update.get("toolCallId"))
            if call_id not in tools:
                tools[call_id] = {}
                items.append([("tool", None), tools[call_id]])
            tools[call_id].update({k: v for k, v in update.items() if v is not None})
        elif kind == "plan":
            if plan is None:
                plan = [("plan", None), []]
                items.append(plan)
            plan[1] = update.get("entries") or []
        elif kind == "current_mode_update":
            items.append([("mode", None), update.get("currentModeId")])
        elif kind == "usage_update":
            usage = update
    return items, usage


def render(record: SessionRecord, updates: Iterable[Json], dim: Callable[[str], str]) -> Iterator[str]:
    forked = f" (forked from {record.parent_id})" if record.parent_id else ""
    yield f"{record.title or '(untitled)'}\n"
    yield dim(f"{record.id}{forked} in {record.cwd}\n")
    yield dim(f"created {when(record.created_at)}, updated {when(record.updated_at)}\n")
    ended = how_it_ended(record)
    if ended:
        yield f"{ended}\n"
    items, usage = transcript(updates)
    for (kind, _), body in items:
        if kind == "user_message_chunk":
            yield "\n" + "".join(f"> {line}\n" for line in " ".join(body).splitlines() or [""])
        elif kind == "agent_message_chunk":
            yield "\n" + "".join(body).strip("\n") + "\n"
        elif kind == "agent_thought_chunk":
            yield "\n" + dim("".join(f"(thinking) {line}\n" for line in "".join(body).strip().splitlines()))
        elif kind == "tool":
            yield f"\n[{body.get('status', 'pending')}] {body.get('title', 'tool call')}\n"
            for item in body.get("content") or []:
                yield "".join(f"    {line}\n" for line in tool_content(item))
        elif kind == "plan":
            entries = [f"  {CHECKBOX.get(e.get('status'), '[ ]')} {e.get('content')}\n" for e in body]
            yield "\nPlan:\n" + "".join(entries)
        elif kind == "mode":
            yield "\n" + dim(f"-- mode: {body} --\n")
    if usage is not None:
        cost = usage.get("cost") or {}
        spent = f", cost {cost.get('amount')} {cost.get('currency', '')}".rstrip() if cost else ""
        yield "\n" + dim(f"context: {usage.get('used')} of {usage.get('size')} tokens{spent}\n")


def cmd_show(store: SqliteSessionStore, args: argparse.Namespace, out: TextIO) -> int:
    record = find(store, args.id)
    color = out.isatty() and not os.environ.get("NO_COLOR")

    def dim(text: str) -> str:
        return "".join(f"\x1b[2m{line}\x1b[0m\n" for line in text.splitlines()) if color else text

    out.writelines(render(record, (parse(body) for body in store.updates(record.id)), dim))
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
