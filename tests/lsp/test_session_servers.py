"""A session's language servers, in process, against real server processes (the small test server): what an edit
is told, how a check decides the server has settled, and that no server holds a call up or outlives its session."""

from __future__ import annotations

import logging
import os
import signal
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest

from coder_agent.agent.diagnostics import Edit
from coder_agent.config.language_servers import LanguageServerConfig
from coder_agent.lsp.session import SessionServers
from coder_agent.lsp.specs import configured
from tests.support.language_servers import fake_specs, running_in
from tests.support.processes import alive, wait_gone

pytestmark = pytest.mark.anyio

OLD = "first\nERROR old\nthird\n"


@asynccontextmanager
async def servers(workspace: Path, *flags: str, wait: float = 10.0) -> AsyncIterator[SessionServers]:
    async with anyio.create_task_group() as tasks:
        session = SessionServers(fake_specs(*flags), lambda: [str(workspace)], tasks, wait)
        try:
            yield session
        finally:
            with anyio.fail_after(10):
                await session.close()


def edit(workspace: Path, old: str | None, new: str | None, name: str = "a.fake") -> Edit:
    return Edit(str(workspace / name), old, new)


@pytest.mark.parametrize("flags", [(), ("--push",), ("--push", "--staged"), ("--push", "--staged", "--no-version")])
async def test_an_edit_is_told_only_the_problems_it_introduced_with_their_lines(
    workspace: Path, flags: tuple[str, ...]
) -> None:
    new = "added line\nfirst\nERROR old\nthird\nWARN new\n"  # the old error moved down a line: not new
    async with servers(workspace, *flags) as session:
        with anyio.fail_after(15):
            [report] = await session.after_edits([edit(workspace, OLD, new)], session.edit_wait)
    assert not report.late and report.stopped is None
    [problem] = report.new
    assert (problem.line, problem.column, problem.severity, problem.code) == (5, 1, "warning", "W1")
    assert (report.fixed, report.remaining) == (0, 1)


async def test_a_fix_is_told_no_new_problems_and_how_many_it_fixed(workspace: Path) -> None:
    async with servers(workspace) as session:
        with anyio.fail_after(15):
            [broke] = await session.after_edits([edit(workspace, OLD, OLD + "ERROR two\n")], 10)
            [fixed] = await session.after_edits([edit(workspace, OLD + "ERROR two\n", "first\nthird\n")], 10)
    assert [p.line for p in broke.new] == [4]
    assert fixed.new == () and (fixed.fixed, fixed.remaining) == (2, 0)


@pytest.mark.parametrize("hangs", ["--hang", "--hang-diagnostics"])
async def test_a_server_that_never_answers_holds_an_edit_no_longer_than_the_wait(workspace: Path, hangs: str) -> None:
    async with servers(workspace, hangs, wait=0.5) as session:
        for _ in range(2):
            started = time.monotonic()
            [report] = await session.after_edits([edit(workspace, OLD, OLD + "ERROR\n")], session.edit_wait)
            assert time.monotonic() - started < 1.5
            assert report.late and report.new == ()
            assert report.starting or hangs == "--hang-diagnostics"  # it never answered initialize


async def test_a_check_that_was_late_is_compared_later_with_what_the_model_last_heard(workspace: Path) -> None:
    async with servers(workspace, "--slow-start", "1", wait=0.3) as session:
        [late] = await session.after_edits([edit(workspace, OLD, OLD + "ERROR one\n")], session.edit_wait)
        assert late.late and late.starting
        with anyio.fail_after(15):
            [report] = await session.after_edits([edit(workspace, OLD + "ERROR one\n", OLD + "ERROR one\nx\n")], 10)
    assert [p.line for p in report.new] == [4]  # the first edit's error, never told before


async def test_a_crashed_server_fails_no_edit_and_is_said_once(workspace: Path) -> None:
    async with servers(workspace) as session:
        with anyio.fail_after(15):
            await session.after_edits([edit(workspace, OLD, OLD + "x\n")], 10)
        [pid] = running_in(workspace)
        os.kill(pid, signal.SIGKILL)
        assert not await wait_gone([pid])
        started = time.monotonic()
        [told] = await session.after_edits([edit(workspace, OLD + "x\n", OLD + "y\n")], 10)
        assert time.monotonic() - started < 2  # a dead server is not waited for
        again = await session.after_edits([edit(workspace, OLD + "y\n", OLD + "z\n")], 10)
    assert told.stopped is not None and "SIGKILL" in told.stopped
    assert again == []  # said once


async def test_a_missing_server_is_skipped_and_said_once_in_the_log(
    workspace: Path, caplog: pytest.LogCaptureFixture
) -> None:
    specs, _ = configured({"nope": LanguageServerConfig(command="no-such-language-server-x", extensions=[".nope"])})
    caplog.set_level(logging.INFO, logger="coder_agent.lsp")
    async with anyio.create_task_group() as tasks:
        session = SessionServers(specs, lambda: [str(workspace)], tasks, 3)
        for _ in range(2):
            assert await session.after_edits([edit(workspace, None, "x", "a.nope")], 3) == []
        assert "nope: no-such-language-server-x was not found on PATH" in session.missing()
        await session.close()
    said = [r.getMessage() for r in caplog.records if "no-such-language-server-x" in r.getMessage()]
    assert len(said) <= 1  # once per process: an earlier test may have said it already


async def test_the_server_starts_with_the_first_edit_and_dies_with_the_session_even_one_that_lingers(
    workspace: Path,
) -> None:
    async with anyio.create_task_group() as tasks:
        session = SessionServers(fake_specs("--linger"), lambda: [str(workspace)], tasks, 10)
        assert running_in(workspace) == []  # made, not started
        with anyio.fail_after(15):
            [report] = await session.after_edits([edit(workspace, OLD, OLD + "ERROR\n")], 10)
        assert [p.line for p in report.new] == [4]
        [pid] = running_in(workspace)
        with anyio.fail_after(10):
            await session.close()
        assert not alive(pid)


async def test_only_files_inside_the_roots_in_a_configured_language_are_checked(
    workspace: Path, tmp_path: Path
) -> None:
    async with servers(workspace) as session:
        assert session.handles(str(workspace / "deep" / "a.fake"))
        assert not session.handles(str(workspace / "a.txt"))
        assert not session.handles(str(tmp_path / "elsewhere.fake"))
        assert await session.after_edits([Edit(str(tmp_path / "elsewhere.fake"), None, "ERROR")], 3) == []
    assert running_in(workspace) == []


async def test_the_diagnostics_of_files_are_listed_and_a_deleted_file_is_let_go(workspace: Path) -> None:
    named: Callable[[str], str] = lambda name: str(workspace / name)  # noqa: E731
    async with servers(workspace) as session:
        with anyio.fail_after(15):
            [report] = await session.problems([(named("a.fake"), OLD), (named("b.fake"), "WARN\nERROR\n")], 10)
            assert await session.after_edits([edit(workspace, OLD, None)], 10) == []
    assert sorted((Path(p.path).name, p.line, p.severity) for p in report.problems) == [
        ("a.fake", 2, "error"),
        ("b.fake", 1, "warning"),
        ("b.fake", 2, "error"),
    ]
    assert len(report.checked) == 2 and report.late == ()
