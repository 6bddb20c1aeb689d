"""Which stored session `coder-agent run --continue` / `--resume ID` continues.

`last` (what `--continue` asks for) is the session of this folder that changed last; anything else is a session
id, or the start of one (with or without its `sess_`), as `claude --resume` and `codex resume` take them. Two
sessions starting alike are refused by name: guessing would continue someone else's conversation.
"""

from __future__ import annotations

from ..store.base import SessionStore

LAST = "last"
ID_PREFIX = "sess_"
PAGE = 500


class NoSuchSession(Exception):
    """What the user named is no stored session (or names several); the message says which."""


def resolve(store: SessionStore | None, wanted: str, cwd: str) -> str:
    """The id of the session `wanted` names (raises `NoSuchSession`)."""
    if store is None:
        raise NoSuchSession("the sessions cannot be read, so none can be continued")
    if wanted == LAST:
        records, _ = store.list(cwd, None, 1)
        if not records:
            raise NoSuchSession(f'no stored session of {cwd} to continue (start one: coder-agent run "...")')
        return records[0].id
    if store.get(wanted) is not None:
        return wanted
    prefix = wanted if wanted.startswith(ID_PREFIX) else ID_PREFIX + wanted
    found = _ids_starting(store, prefix)
    if len(found) == 1:
        return found[0]
    if not found:
        raise NoSuchSession(f"unknown session {wanted} (see `coder-agent sessions list`)")
    shown = ", ".join(found[:5]) + (", ..." if len(found) > 5 else "")
    raise NoSuchSession(f"{wanted} names {len(found)} sessions ({shown}): give more of the id")


def _ids_starting(store: SessionStore, prefix: str) -> list[str]:
    """Every stored session id that starts with `prefix`, newest first (the sessions are read a page at a time:
    a run does this once, and the store has no index on id prefixes to ask instead)."""
    found: list[str] = []
    cursor: str | None = None
    while True:
        records, cursor = store.list(None, cursor, PAGE)
        found += [record.id for record in records if record.id.startswith(prefix)]
        if cursor is None:
            return found
