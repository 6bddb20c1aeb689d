"""A session's language servers (the core's `Diagnostics`): one per language per root, started when the first edit
of one of its files is prepared (or the `diagnostics` tool asks), stopped with the session.

What an edit is told is what it changed: each file's problems are kept as they were last reported (or as the
agent found the file), and an edit's check compares the new text's problems with those. A check that does not
settle in time says so and changes nothing, so the next one still compares with what the model last heard.
A server that cannot start is skipped (logged once); one that stops is said once, and not started again.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import anyio
import anyio.abc

from ..agent.diagnostics import Edit, EditReport, Problem, ProblemReport
from .compare import compare, problem, significant
from .connection import ServerGone
from .launch import CannotStart, launch
from .server import START_TIMEOUT, LanguageServer
from .specs import ServerSpec, spec_for
from .types import Diagnostic

log = logging.getLogger(__name__)

CLOSE_WAIT = 5.0  # for every server of the session to be gone
SCAN_AT_ONCE = 8  # files a server is asked about at once by the `diagnostics` tool
_said: set[str] = set()  # what the log was told about missing servers: once per process


def _absolute(path: str) -> str:
    return os.path.abspath(path)


def _say_once(message: str) -> None:
    if message not in _said:
        _said.add(message)
        log.info("%s", message)


@dataclass
class _Baseline:
    """A file as the model last heard about it: its text (None: absent) and that text's problems, once known;
    `written`: what the agent wrote since, when that edit's check was late (the next edit starts from it)."""

    text: str | None
    problems: list[Diagnostic] | None
    written: str | None = None
    learning: anyio.Lock = field(default_factory=anyio.Lock)  # its problems are asked for once, not twice

    async def learn(self, server: LanguageServer, path: str) -> list[Diagnostic]:
        """The problems of the baseline's text, asked for unless known (raises `ServerGone`)."""
        async with self.learning:
            if self.problems is None:
                assert self.text is not None
                self.problems = await server.diagnostics(path, self.text)
            return self.problems


class SessionServers:
    def __init__(
        self,
        specs: Sequence[ServerSpec],
        roots: Callable[[], Sequence[str]],
        background: anyio.abc.TaskGroup,
        edit_wait: float,
    ) -> None:
        self.edit_wait = edit_wait
        self._specs = list(specs)
        self._roots = roots
        self._background = background
        self._servers: dict[tuple[str, str], LanguageServer] = {}
        self._cannot: dict[tuple[str, str], str] = {}
        self._told_gone: set[tuple[str, str]] = set()
        self._baselines: dict[str, _Baseline] = {}
        self._closed = False

    # ---- which server --------------------------------------------------------------------------------------

    def _root_of(self, path: str) -> str | None:
        """The innermost root holding `path` (its server's workspace)."""
        roots = [os.path.abspath(root) for root in self._roots()]
        inside = [root for root in roots if path == root or path.startswith(root.rstrip("/") + "/")]
        return max(inside, key=len) if inside else None

    def handles(self, path: str) -> bool:
        return spec_for(self._specs, path) is not None and self._root_of(os.path.abspath(path)) is not None

    def _server(self, path: str) -> tuple[tuple[str, str], LanguageServer] | None:
        """The server of `path`'s language and root, started now if it was not; None when there is none."""
        path = os.path.abspath(path)
        spec, root = spec_for(self._specs, path), self._root_of(path)
        if spec is None or root is None or self._closed:
            return None
        key = (spec.language, root)
        server = self._servers.get(key)
        if server is not None:
            return key, server
        if key in self._cannot:
            return None
        try:
            how = launch(spec, root, self._roots())
        except CannotStart as exc:
            self._cannot[key] = str(exc)
            _say_once(f"no {spec.language} diagnostics: {exc}")
            return None
        server = self._servers[key] = LanguageServer(how)
        self._background.start_soon(server.run, name=f"language server {spec.name} for {root}")
        return key, server

    def missing(self) -> list[str]:
        roots = self._roots()
        lines = []
        for spec in self._specs:
            try:
                launch(spec, os.path.abspath(roots[0]), roots)
            except CannotStart as exc:
                lines.append(f"{spec.language}: {exc}")
        return lines

    # ---- edits -----------------------------------------------------------------------------------------------

    def _baseline(self, path: str, text: str | None) -> _Baseline:
        """What the file's check compares with: as last reported, unless it has changed since (then as it is)."""
        baseline = self._baselines.get(path)
        if baseline is None or (text != baseline.text and (baseline.written is None or text != baseline.written)):
            baseline = self._baselines[path] = _Baseline(text, [] if text is None else None)
        return baseline

    def expect(self, path: str, text: str | None) -> None:
        found = self._server(path)
        if found is None:
            return
        baseline = self._baseline(os.path.abspath(path), text)
        if baseline.problems is None and baseline.text is not None:
            self._background.start_soon(self._learn, found[1], os.path.abspath(path), baseline)

    async def _learn(self, server: LanguageServer, path: str, baseline: _Baseline) -> None:
        """The baseline's problems, in the background (the server may still be starting)."""
        with anyio.move_on_after(START_TIMEOUT):
            try:
                await baseline.learn(server, path)
            except ServerGone:
                return

    async def after_edits(self, edits: Sequence[Edit], wait: float) -> list[EditReport]:
        checks: dict[tuple[str, str], list[tuple[Edit, _Baseline]]] = {}
        servers: dict[tuple[str, str], LanguageServer] = {}
        for edit in edits:
            path = _absolute(edit.path)
            found = self._server(path)
            if found is None:
                continue
            key, server = found
            if edit.new_text is None:  # deleted: nothing to check
                server.close_document(path)
                self._baselines.pop(path, None)
                continue
            servers[key] = server
            edit = Edit(path, edit.old_text, edit.new_text)
            checks.setdefault(key, []).append((edit, self._baseline(path, edit.old_text)))
        done: dict[str, list[Diagnostic]] = {}
        with anyio.move_on_after(wait):
            async with anyio.create_task_group() as tasks:
                for key, files in checks.items():
                    for edit, baseline in files:
                        tasks.start_soon(self._check, servers[key], edit, baseline, done)
        return [
            report
            for key, files in checks.items()
            if (report := self._edit_report(key, servers[key], files, done)) is not None
        ]

    async def _check(
        self, server: LanguageServer, edit: Edit, baseline: _Baseline, done: dict[str, list[Diagnostic]]
    ) -> None:
        assert edit.new_text is not None
        try:
            await baseline.learn(server, edit.path)
            done[edit.path] = await server.diagnostics(edit.path, edit.new_text)
        except ServerGone:
            await server.down.wait()  # soon: how it ended is being read (bounded by the caller)

    def _edit_report(
        self,
        key: tuple[str, str],
        server: LanguageServer,
        files: list[tuple[Edit, _Baseline]],
        done: dict[str, list[Diagnostic]],
    ) -> EditReport | None:
        paths = tuple(edit.path for edit, _ in files)
        if server.gone is not None and not all(edit.path in done for edit, _ in files):
            if key in self._told_gone:
                return None
            self._told_gone.add(key)
            return EditReport(server.name, paths, stopped=server.gone)
        new: list[Problem] = []
        fixed = remaining = 0
        for edit, baseline in files:
            now = done.get(edit.path)
            if now is None or baseline.problems is None:
                baseline.written = edit.new_text
                continue
            assert edit.new_text is not None
            change = compare(significant(baseline.problems), baseline.text or "", significant(now), edit.new_text)
            new += [problem(edit.path, diagnostic, edit.new_text) for diagnostic in change.new]
            fixed += change.fixed
            remaining += change.remaining
            self._baselines[edit.path] = _Baseline(edit.new_text, now)  # what the model hears now
        late = not all(edit.path in done for edit, _ in files)
        starting = late and not server.ready.is_set()
        return EditReport(server.name, paths, tuple(new), fixed, remaining, late=late, starting=starting)

    # ---- the `diagnostics` tool ------------------------------------------------------------------------------

    async def problems(self, files: Sequence[tuple[str, str]], wait: float) -> list[ProblemReport]:
        by_server: dict[tuple[str, str], list[tuple[str, str]]] = {}
        servers: dict[tuple[str, str], LanguageServer] = {}
        for named, text in files:
            path = _absolute(named)
            server_of = self._server(path)
            if server_of is not None:
                servers[server_of[0]] = server_of[1]
                by_server.setdefault(server_of[0], []).append((path, text))
        done: dict[str, list[Diagnostic]] = {}
        with anyio.move_on_after(wait):
            async with anyio.create_task_group() as tasks:
                for key, listed in by_server.items():
                    limiter = anyio.CapacityLimiter(SCAN_AT_ONCE)
                    for path, text in listed:
                        tasks.start_soon(self._current, servers[key], path, text, limiter, done)
        reports = []
        for key, listed in by_server.items():
            server = servers[key]
            checked = tuple(path for path, _ in listed if path in done)
            found = [
                problem(path, diagnostic, text)
                for path, text in listed
                for diagnostic in done.get(path, [])
                if (diagnostic.severity or 1) <= 3
            ]
            late = tuple(path for path, _ in listed if path not in done)
            reports.append(ProblemReport(server.name, checked, tuple(found), late, server.gone if late else None))
        return reports

    async def _current(
        self,
        server: LanguageServer,
        path: str,
        text: str,
        limiter: anyio.CapacityLimiter,
        done: dict[str, list[Diagnostic]],
    ) -> None:
        async with limiter:
            try:
                done[path] = await server.diagnostics(path, text)
            except ServerGone:
                return
        baseline = self._baselines.get(path)
        if baseline is None:
            server.close_document(path)  # opened for this look only: the server need not keep it
        elif baseline.text == text and baseline.problems is None:
            baseline.problems = done[path]

    # ---- the end ---------------------------------------------------------------------------------------------

    async def close(self) -> None:
        self._closed = True
        for server in self._servers.values():
            server.stop()
        with anyio.move_on_after(CLOSE_WAIT):
            for server in self._servers.values():
                await server.finished.wait()
