"""Modes and the permission gate: whether a prepared tool call runs, asks the user first, or is refused."""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from ...acp.schema import PermissionOption, SessionMode
from ...kit import modes
from ...kit.untrusted import read_capped

if TYPE_CHECKING:  # the tools are not needed to answer `session/new`
    from ..tools.base import Intent

MODES: list[SessionMode] = [SessionMode(id=m.id, name=m.name, description=m.description) for m in modes.MODES]
MODE_IDS = list(modes.MODE_IDS)
DEFAULT_MODE = modes.DEFAULT_MODE

Action = Literal["allow", "ask", "deny"]
LastingLookup = Callable[[str, "Intent"], "bool | None"]
"""(tool, intent) -> what the user's lasting rules say about the call (`lasting_rules.decision_of`)."""

# The "always" answers and what they keep: the session's own rules, or a lasting rule (`lasting_rules`).
SESSION_SCOPE = {"allow_always": True, "reject_always": False}
LASTING_SCOPE: dict[str, tuple[Literal["allow", "reject"], Literal["project", "global"]]] = {
    "allow_always_project": ("allow", "project"),
    "allow_always_global": ("allow", "global"),
    "reject_always_project": ("reject", "project"),
    "reject_always_global": ("reject", "global"),
}

# Shell syntax that can chain or redirect: such commands never match a remembered "always allow" prefix.
_SHELL_METACHARACTERS = set(";&|<>`$(){}\n")


@dataclass(frozen=True)
class Decision:
    action: Action
    reason: str = ""  # shown to the user and told to the model
    hint: str = ""  # what the model should do instead (the model alone reads it)


def command_prefix(command: str) -> tuple[str, ...] | None:
    """The prefix an "always allow" remembers: the program and its subcommand (`npm test`, `git status`).

    None for commands that chain, redirect or substitute: those always ask.
    """
    if any(char in _SHELL_METACHARACTERS for char in command):
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if not words:
        return None
    program = words[0]
    subcommand = words[1] if len(words) > 1 else ""
    if subcommand and not subcommand.startswith("-") and subcommand.replace("-", "").replace("_", "").isalnum():
        return (program, subcommand)
    return (program,)


def _inside(path: str, roots: list[str]) -> bool:
    real = os.path.realpath(path)
    for root in roots:
        real_root = os.path.realpath(root)
        if real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep):
            return True
    return False


def _named_git_dir(start: str) -> str | None:
    """The git folder that the nearest `.git` at or above `start` names, when that is a `.git` file (a linked
    work tree, a submodule, `--separate-git-dir`): it need not be called `.git` itself."""
    folder = os.path.realpath(start)
    while True:
        dot_git = os.path.join(folder, ".git")
        if os.path.lexists(dot_git):
            try:
                text = read_capped(dot_git, 4096).data.decode("utf-8", "replace")
            except OSError:  # a folder (the usual case), or nothing a file could name
                return None
            if not text.startswith("gitdir: "):
                return None
            return os.path.realpath(os.path.join(folder, text[len("gitdir: ") :].strip()))
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _in_git_folder(path: str, roots: list[str]) -> bool:
    """Whether writing `path` writes in a git folder: a `.git` in it, as written or once its links are followed
    (in any case: a case-insensitive disk writes `.GIT/hooks` into `.git/hooks`), or a folder that a `.git` file
    names (the roots' own, or the path's), or `GIT_DIR`."""
    real = os.path.realpath(path)
    for name in (os.path.abspath(path), real):
        if any(part.casefold() == ".git" for part in name.split(os.sep)):
            return True
    named = {_named_git_dir(folder) for folder in (*roots, os.path.dirname(real))}
    if os.environ.get("GIT_DIR"):  # the agent was started with its repository named outright
        named.add(os.path.realpath(os.environ["GIT_DIR"]))
    return any(real == folder or real.startswith(folder.rstrip(os.sep) + os.sep) for folder in named if folder)


@dataclass
class PermissionRules:
    """The user's "always" answers, remembered for the session: per tool for edits, per prefix for commands."""

    tools: dict[str, bool] = field(default_factory=dict)
    prefixes: dict[tuple[str, ...], bool] = field(default_factory=dict)
    exact_commands: dict[str, bool] = field(default_factory=dict)  # commands that have no safe prefix
    domains: dict[str, bool] = field(default_factory=dict)  # web pages' hosts (`fetch`)

    def lookup(self, tool: str, intent: Intent) -> bool | None:
        if intent.domain is not None:
            return self.domains.get(intent.domain)
        if intent.command is None:
            return self.tools.get(_tool_key(tool, intent))
        command = (intent.command or "").strip()
        if command_prefix(command) is None:
            return self.exact_commands.get(command)
        words = tuple(shlex.split(command))
        for known, allowed in self.prefixes.items():
            if words[: len(known)] == known:
                return allowed
        return None

    def remember(self, tool: str, intent: Intent, allowed: bool) -> None:
        if intent.domain is not None:
            self.domains[intent.domain] = allowed
            return
        if intent.command is None:
            self.tools[_tool_key(tool, intent)] = allowed
            return
        command = (intent.command or "").strip()
        prefix = command_prefix(command)
        if prefix is None:
            self.exact_commands[command] = allowed
        else:
            self.prefixes[prefix] = allowed

    @staticmethod
    def always_label(tool: str, intent: Intent) -> str:
        """What an "always" answer covers, for the option's name, in the words the user sees (not tool names)."""
        if intent.effect == "edit" and intent.command is None:
            return "file edits"
        if intent.mcp_tool is not None:
            server, name = intent.mcp_tool
            return f"{server}'s `{name}`"
        if intent.domain is not None:
            return f"fetching from {intent.domain}"
        if intent.command is None:
            return f"`{tool}` calls"
        command = (intent.command or "").strip()
        prefix = command_prefix(command)
        if prefix is None:
            return "this exact command"
        return f"`{' '.join(prefix)}` commands"


def _tool_key(tool: str, intent: Intent) -> str:
    """What a session's "always" answer to a call without a command is kept under: file edits are one thing to
    the user, whichever tool makes them (`write_file`, `edit_file`, `apply_patch`)."""
    return FILE_EDITS if intent.effect == "edit" else tool


FILE_EDITS = "file edits"


def decide(
    mode: str,
    tool: str,
    intent: Intent,
    rules: PermissionRules,
    roots: list[str],
    lasting: LastingLookup | None = None,
) -> Decision:
    """The gate: the mode, then the session's "always" answers, then the user's lasting rules."""
    if intent.effect in ("read", "none"):
        return Decision("allow")
    if mode == "bypass":
        return Decision("allow")
    if mode == "plan" and intent.effect != "fetch":  # reading a web page changes nothing: it asks, as elsewhere
        what = "edits files" if intent.effect == "edit" else "runs commands or has side effects"
        return Decision(
            "deny", f"Plan mode is read-only and this call {what}.", "Describe the change as a plan instead."
        )
    outside = [path for path in intent.written_paths if not _inside(path, roots)]
    if outside:
        # Outside the session's roots every write asks, whatever was remembered and whatever the mode.
        return Decision("ask", f"writes outside the project: {', '.join(outside)}")
    in_git = [path for path in intent.written_paths if _in_git_folder(path, roots)]
    if in_git:
        # git runs what its folder holds (hooks, the config's filters): as outside the roots, every write asks.
        return Decision("ask", f"writes in a git folder, whose hooks and config git runs: {', '.join(in_git)}")
    if mode != "ask":
        remembered = rules.lookup(tool, intent)
        if remembered is None and lasting is not None:
            remembered = lasting(tool, intent)
        if remembered is True:
            return Decision("allow")
        if remembered is False:
            return Decision("deny", "The user chose to always reject this kind of call.", "Do not retry it.")
    if mode == "accept-edits" and intent.effect == "edit":
        return Decision("allow")
    return Decision("ask")


def permission_options(tool: str, intent: Intent, lasting: bool = False) -> list[PermissionOption]:
    """What the user may answer: allow once, always allow, reject. People choose among those three (the agents
    they know offer the same); an "always reject", or an "always" for every scope, made six or eight options to
    read before each call. With `lasting` (the user's rules file can be written), "always" keeps a command prefix,
    an MCP tool or a web page's host for this project (`rules.toml`); file edits are kept for the session (a
    project that should take every edit unasked has a mode for it: accept-edits). Rules for other scopes go in
    `rules.toml` by hand."""
    label = PermissionRules.always_label(tool, intent)
    for_project = lasting and not (intent.effect == "edit" and intent.command is None)
    always = (
        PermissionOption(
            option_id="allow_always_project", name=f"Always allow {label} in this project", kind="allow_always"
        )
        if for_project
        else PermissionOption(
            option_id="allow_always", name=f"Always allow {label} in this session", kind="allow_always"
        )
    )
    return [
        PermissionOption(option_id="allow_once", name="Allow", kind="allow_once"),
        always,
        PermissionOption(option_id="reject_once", name="Reject", kind="reject_once"),
    ]
