"""How a configured server starts for one root: its program found, and what keeps the checkout from running code.

The checkout is hostile. The servers themselves would run some of its files, so each default is given the
trusted choice instead:

- basedpyright runs a Python interpreter to learn the import paths, and on its own it runs the checkout's
  `.venv/bin/python` (seen: a script there ran). It is told `python.pythonPath`: the first `python3` on the
  user's PATH that is outside the session's roots (else the agent's own interpreter). The project's virtual
  environment is still searched, by listing its `site-packages` (`extraPaths`): read, never run. A checkout's
  own config cannot name an interpreter (basedpyright refuses `pythonPath` there: seen).
- typescript-language-server runs the checkout's `node_modules/typescript` when there is one, before its own;
  it is given the `tsserver.path` of the TypeScript installed beside it instead, and is not started without one.
  TypeScript 7 (the native compiler, npm's `typescript` from 7.0) has no `tsserver.js` for it, but serves LSP
  itself: where typescript-language-server cannot start, a `tsc` of TypeScript 7 on PATH is (`tsc --lsp --stdio`;
  pull diagnostics, a check in tens of milliseconds).
"""

from __future__ import annotations

import glob
import json
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..kit.untrusted import is_inside, real_roots
from .specs import ServerSpec

log = logging.getLogger(__name__)

PYTHON_SERVERS = ("basedpyright-langserver", "pyright-langserver")
VENV_FOLDERS = (".venv", "venv", "env")


@dataclass(frozen=True)
class Launch:
    """A server ready to start in `root`."""

    spec: ServerSpec
    program: str  # absolute
    root: str
    settings: Mapping[str, Any]
    initialization_options: Mapping[str, Any] | None


def _inside(path: str, roots: Sequence[str]) -> bool:
    return is_inside(os.path.realpath(path), real_roots(roots))


class CannotStart(Exception):
    """The server cannot be started (not found, or not safely): the message says why, for the log and doctor."""


def _search_path(roots: Sequence[str]) -> list[str]:
    """PATH's folders that are absolute and outside the roots (a relative entry, `.`, would find the checkout's),
    then the agent's own `bin` (a server installed with it: basedpyright is a dependency)."""
    folders = [folder for folder in os.environ.get("PATH", os.defpath).split(os.pathsep) if os.path.isabs(folder)]
    folders.append(os.path.dirname(sys.executable))
    return [folder for folder in dict.fromkeys(folders) if not _inside(folder, roots)]


def find_program(command: str, roots: Sequence[str] = ()) -> str | None:
    """The absolute path of `command`: itself when it is a path (`~` expanded), else the first on the PATH."""
    if os.sep in command:
        path = os.path.abspath(os.path.expanduser(command))
        return path if os.path.isfile(path) and os.access(path, os.X_OK) else None
    for folder in _search_path(roots):
        path = os.path.join(folder, command)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def _trusted_python(roots: Sequence[str]) -> str:
    for name in ("python3", "python"):
        found = find_program(name, roots)
        if found is not None:
            return found
    return sys.executable


def _venv_packages(root: str) -> list[str]:
    """The `site-packages` folders of the project's virtual environment, found by listing (never run)."""
    found: list[str] = []
    for name in VENV_FOLDERS:
        if os.path.isfile(os.path.join(root, name, "pyvenv.cfg")):
            pattern = os.path.join(glob.escape(root), name, "lib", "python3*", "site-packages")
            found += sorted(path for path in glob.glob(pattern) if os.path.isdir(path))
    return found


def _merged(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in over.items():
        old = merged.get(key)
        merged[key] = _merged(old, value) if isinstance(old, Mapping) and isinstance(value, Mapping) else value
    return merged


def _tsserver_beside(program: str) -> str | None:
    """The `typescript/lib/tsserver.js` that Node would resolve from the server's own files (its bundled one)."""
    folder = os.path.dirname(os.path.realpath(program))
    while True:
        candidates = [os.path.join(folder, "node_modules", "typescript", "lib", "tsserver.js")]
        if os.path.basename(folder) == "node_modules":
            candidates.append(os.path.join(folder, "typescript", "lib", "tsserver.js"))
        for candidate in candidates:
            if os.path.isfile(candidate):
                return candidate
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _native_typescript(roots: Sequence[str]) -> str | None:
    """A `tsc` on PATH that is TypeScript 7 or later (its package says so), which serves LSP itself."""
    program = find_program("tsc", roots)
    if program is None:
        return None
    package = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(program))), "package.json")
    try:
        with open(package, encoding="utf-8") as handle:
            about = json.load(handle)
        major = int(str(about.get("version", "0")).split(".")[0])
    except (OSError, ValueError, AttributeError):
        return None
    return program if about.get("name") == "typescript" and major >= 7 else None


def launch(spec: ServerSpec, root: str, roots: Sequence[str]) -> Launch:
    """How `spec` starts in `root`; raises `CannotStart` saying why it cannot."""
    try:
        return _launch(spec, root, roots)
    except CannotStart as exc:
        native = _native_typescript(roots) if spec.default and spec.language == "typescript" else None
        if native is None:
            raise
        log.debug("%s; TypeScript 7's own server is used instead", exc)
        return Launch(replace(spec, command="tsc", args=("--lsp", "--stdio")), native, root, dict(spec.settings), None)


def _launch(spec: ServerSpec, root: str, roots: Sequence[str]) -> Launch:
    program = find_program(spec.command, roots)
    if program is None:
        raise CannotStart(f"{spec.command} was not found on PATH")
    if _inside(program, roots):
        raise CannotStart(f"{program} is inside the project: a checkout's programs are not started")
    base = os.path.basename(program)
    settings: dict[str, Any] = {}
    options = dict(spec.initialization_options) if spec.initialization_options is not None else None
    if base in PYTHON_SERVERS:
        analysis = {"typeCheckingMode": "standard", "diagnosticMode": "openFilesOnly", "extraPaths": []}
        analysis["extraPaths"] = _venv_packages(root)
        settings = {
            "python": {"pythonPath": _trusted_python(roots), "analysis": analysis},
            "basedpyright": {"analysis": analysis},
        }
    elif base == "typescript-language-server":
        given = (options or {}).get("tsserver", {})
        if not (isinstance(given, Mapping) and given.get("path")):
            tsserver = _tsserver_beside(program)
            if tsserver is None:
                raise CannotStart(
                    f"no TypeScript installed beside {program} (npm install -g typescript); the project's own "
                    "node_modules/typescript is not run"
                )
            options = _merged(options or {}, {"tsserver": {"path": tsserver}})
    return Launch(spec, program, root, _merged(settings, spec.settings), options)
