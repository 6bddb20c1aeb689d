"""Permission rules that outlast a session: kept for one project or for all projects, in the user's config.

A rule allows or rejects calls without asking. It names what it covers with

- `tool`: a tool name (a glob: `write_file`, `mcp__github__*`), or `mcp`: an MCP server and tool, `server/tool`
  (a glob: `github/*`), and optionally
- `command`: a command prefix, word by word (`npm test` covers `npm test -- -x`, never `npm test; rm -rf ~`:
  commands that chain, redirect or substitute match no prefix), or `exact_command`: one command exactly;
- `path`: a glob the written files must all match (`docs/**`, `*.md`; relative to the project, or absolute);
- `domain`: the host of a web page `fetch` reads (a glob: `docs.python.org`, `*.python.org`; no port);
- `project`: the project's folder (absolute); a session in that folder or below it uses the rule. Without it
  the rule is for all projects.

Writes outside the session's roots always ask, and `ask` mode asks for everything, whatever the rules say. The
rules live only in the user's config folder (`rules_file.py`): nothing a project ships can add one.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from .gate import command_prefix

if TYPE_CHECKING:
    from ..tools.base import Intent

Action = Literal["allow", "reject"]
Scope = Literal["project", "global"]
FIELDS = ("action", "tool", "mcp", "command", "exact_command", "path", "domain", "project")


def glob_pattern(pattern: str) -> re.Pattern[str]:
    """A path glob as a regex: `**` any depth (`**/` also none), `*` and `?` within one segment, `[...]` classes."""
    out, index = [], 0
    while index < len(pattern):
        char = pattern[index]
        if pattern.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
            continue
        if pattern.startswith("**", index):
            out.append(".*")
            index += 2
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = pattern.find("]", index + 1)
            if end == -1:
                out.append(re.escape(char))
            else:
                body = pattern[index + 1 : end].replace("\\", "\\\\")
                out.append(f"[^{body[1:]}]" if body.startswith("!") else f"[{body}]")
                index = end
        else:
            out.append(re.escape(char))
        index += 1
    return re.compile("".join(out) + r"\Z", re.DOTALL)


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


@dataclass(frozen=True)
class Rule:
    action: Action
    tool: str | None = None
    mcp: str | None = None
    command: str | None = None
    exact_command: str | None = None
    path: str | None = None
    project: str | None = None
    domain: str | None = None

    @property
    def scope(self) -> Scope:
        return "project" if self.project is not None else "global"

    @classmethod
    def from_table(cls, table: Any) -> Rule:
        """A rule from its TOML table; `ValueError` says what is wrong with it."""
        if not isinstance(table, dict):
            raise ValueError("a rule must be a table")
        unknown = sorted(set(table) - set(FIELDS))
        if unknown:
            raise ValueError(f"unknown field {unknown[0]!r}")
        values = {name: table.get(name) for name in FIELDS}
        for name, value in values.items():
            if value is not None and not (isinstance(value, str) and value.strip()):
                raise ValueError(f"{name} must be a non-empty string")
        if values["action"] not in ("allow", "reject"):
            raise ValueError('action must be "allow" or "reject"')
        if values["tool"] is None and values["mcp"] is None:
            raise ValueError("a rule needs a tool or an mcp server/tool")
        if values["mcp"] is not None and "/" not in str(values["mcp"]):
            raise ValueError('mcp must be "server/tool" (either may be a glob such as *)')
        if values["command"] is not None and values["exact_command"] is not None:
            raise ValueError("give command or exact_command, not both")
        if values["command"] is not None:
            try:
                if not shlex.split(str(values["command"])):
                    raise ValueError
            except ValueError:
                raise ValueError("command must be words such as `npm test`") from None
        if values["domain"] is not None and any(char in str(values["domain"]) for char in "/:@ "):
            raise ValueError("domain must be a host name such as docs.python.org (a glob; no scheme, port or path)")
        if values["project"] is not None and not os.path.isabs(str(values["project"])):
            raise ValueError("project must be an absolute path")
        return cls(**values)  # type: ignore[arg-type]

    def table(self) -> dict[str, str]:
        return {name: value for name in FIELDS if (value := getattr(self, name)) is not None}

    def describe(self) -> str:
        what = f"MCP {self.mcp}" if self.mcp is not None else f"{self.tool}"
        if self.command is not None:
            what += f" `{self.command}` commands"
        elif self.exact_command is not None:
            what += f" the command `{self.exact_command}`"
        if self.path is not None:
            what += f" on {self.path}"
        if self.domain is not None:
            what += f" from {self.domain}"
        where = f"in {self.project}" if self.project is not None else "in all projects"
        return f"{self.action} {what} {where}"

    def matches(self, tool: str, intent: Intent, cwd: str) -> bool:
        project = os.path.realpath(self.project) if self.project is not None else None
        if project is not None and not _inside(os.path.realpath(cwd), project):
            return False
        if self.mcp is not None and (
            intent.mcp_tool is None or not fnmatch.fnmatchcase("/".join(intent.mcp_tool), self.mcp)
        ):
            return False
        if self.tool is not None and not fnmatch.fnmatchcase(tool, self.tool):
            return False
        if (self.command is not None or self.exact_command is not None) and not self._command_matches(intent):
            return False
        if self.domain is not None and (
            intent.domain is None or not fnmatch.fnmatchcase(intent.domain.lower(), self.domain.lower())
        ):
            return False
        return self.path is None or self._paths_match(intent, project or os.path.realpath(cwd))

    def _command_matches(self, intent: Intent) -> bool:
        command = (intent.command or "").strip()
        if not command:
            return False
        if self.exact_command is not None:
            return command == self.exact_command.strip()
        if command_prefix(command) is None:
            return False  # chains, redirects, substitutions: only an exact rule covers them
        known = shlex.split(self.command or "")
        return shlex.split(command)[: len(known)] == known

    def _paths_match(self, intent: Intent, base: str) -> bool:
        paths = intent.written_paths
        if not paths:
            return False
        pattern = glob_pattern(os.path.expanduser(self.path or ""))
        absolute = os.path.isabs(os.path.expanduser(self.path or ""))
        for path in paths:
            real = os.path.realpath(path)
            if absolute:
                candidate = real
            elif _inside(real, base):
                candidate = os.path.relpath(real, base)
            else:
                return False
            if not pattern.match(candidate):
                return False
        return True


def rule_for(action: Action, tool: str, intent: Intent, project: str | None) -> Rule:
    """The rule an "always" answer to this call keeps: the command's prefix, the MCP tool, or the tool."""
    if intent.mcp_tool is not None:
        return Rule(action, mcp="/".join(intent.mcp_tool), project=project)
    if intent.domain is not None:
        return Rule(action, tool=tool, domain=intent.domain, project=project)
    if intent.command is not None:
        command = intent.command.strip()
        prefix = command_prefix(command)
        if prefix is None:
            return Rule(action, tool=tool, exact_command=command, project=project)
        return Rule(action, tool=tool, command=shlex.join(prefix), project=project)
    return Rule(action, tool=tool, project=project)


def decision_of(rules: list[Rule], tool: str, intent: Intent, cwd: str) -> bool | None:
    """What the rules say about a call: project rules before global ones, and a reject before an allow."""
    for scope in ("project", "global"):
        found = {rule.action for rule in rules if rule.scope == scope and rule.matches(tool, intent, cwd)}
        if "reject" in found:
            return False
        if "allow" in found:
            return True
    return None


class RuleBook(Protocol):
    """The user's lasting rules (`rules_file.RuleFile`)."""

    def rules(self) -> list[Rule]: ...

    def add(self, rule: Rule) -> None: ...
