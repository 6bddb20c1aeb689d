"""The lasting permission rules' file: `rules.toml` in the user's config folder, readable and editable by hand.

    [[rule]]
    action = "allow"            # or "reject"
    tool = "run_command"
    command = "npm test"        # a command prefix; or exact_command = "..."
    project = "/home/me/app"    # leave out: all projects

    [[rule]]
    action = "allow"
    mcp = "github/get_*"        # an MCP server/tool (globs)

    [[rule]]
    action = "reject"
    tool = "write_file"
    path = "**/*.lock"          # the written files (relative to the project, or absolute)

    [[rule]]
    action = "allow"
    tool = "fetch"
    domain = "*.python.org"     # the web pages' host (a glob)

Answers given in the editor ("Always allow ... in this project") are appended; `coder-agent rules` lists and
removes them. The file is read again when it changes; a rule that cannot be used is skipped (and logged), and
a file that cannot be read gives no rules at all: calls ask, as if there were none.
"""

from __future__ import annotations

import logging
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from ...config.userfiles import RULES_FILE, append_private, toml_key, toml_string, write_private
from .lasting_rules import Rule

log = logging.getLogger(__name__)

HEADER = (
    "# coder-agent permission rules: calls they cover run (allow) or are refused (reject) without asking.\n"
    "# Fields: action, tool or mcp (server/tool), command or exact_command, path (a glob), domain (a web host),\n"
    "# project (a folder).\n"
    "# Edit by hand, or list and remove them with `coder-agent rules`.\n"
)


@dataclass
class Loaded:
    rules: list[Rule] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def rule_block(rule: Rule) -> str:
    lines = ["[[rule]]", *(f"{toml_key(name)} = {toml_string(value)}" for name, value in rule.table().items())]
    return "\n".join(lines) + "\n"


class RuleFile:
    def __init__(self, folder: Path) -> None:
        self.path = folder / RULES_FILE
        self._stamp: tuple[int, int] | None = None
        self._loaded = Loaded()

    def load(self) -> Loaded:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return Loaded()
        except (OSError, UnicodeDecodeError) as exc:
            return Loaded(problems=[f"cannot read {self.path}: {exc}"])
        try:
            document = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            return Loaded(problems=[f"{self.path} is not valid TOML ({exc}): none of its rules apply"])
        tables = document.get("rule", [])
        if not isinstance(tables, list):
            return Loaded(problems=[f"{self.path}: `rule` must be an array of tables ([[rule]])"])
        loaded = Loaded()
        for number, table in enumerate(tables, 1):
            try:
                loaded.rules.append(Rule.from_table(table))
            except ValueError as exc:
                loaded.problems.append(f"{self.path}: rule {number} is skipped: {exc}")
        return loaded

    def rules(self) -> list[Rule]:
        """The usable rules, read again when the file changed (another agent process may have added one)."""
        try:
            info = os.stat(self.path)
            stamp: tuple[int, int] | None = (info.st_mtime_ns, info.st_size)
        except OSError:
            stamp = None
        if stamp != self._stamp:
            self._stamp = stamp
            self._loaded = self.load() if stamp is not None else Loaded()
            for problem in self._loaded.problems:
                log.warning("%s", problem)
        return list(self._loaded.rules)

    def add(self, rule: Rule) -> None:
        append_private(self.path, "\n" + rule_block(rule), HEADER)
        log.info("kept a rule in %s: %s", self.path, rule.describe())

    def remove(self, numbers: set[int]) -> list[Rule]:
        """Remove the rules numbered as `load` lists them (from 1); the removed rules. Rewrites the file."""
        loaded = self.load()
        if loaded.problems:  # rewriting would drop what could not be read: the user fixes it first
            raise ValueError(f"{loaded.problems[0]}; fix or remove it by hand first")
        unknown = sorted(number for number in numbers if not 1 <= number <= len(loaded.rules))
        if unknown:
            raise ValueError(f"no rule {unknown[0]} (there are {len(loaded.rules)})")
        kept = [rule for number, rule in enumerate(loaded.rules, 1) if number not in numbers]
        removed = [rule for number, rule in enumerate(loaded.rules, 1) if number in numbers]
        write_private(self.path, HEADER + "".join("\n" + rule_block(rule) for rule in kept))
        return removed
