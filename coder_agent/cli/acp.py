"""`coder-agent acp`: the editor's path. Protect stdout, answer `initialize` (and a plain `session/new`, and the
first prompt's first model call) with the standard library while the runtime is imported in a thread, then serve.
The early stage itself is `prestart/`; this is its order of events."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from .. import __version__

if TYPE_CHECKING:
    from ..prestart import early_prompt
    from ..prestart.early import EarlyRead

TTY_HINT = (
    b"coder-agent acp: this is an Agent Client Protocol server that editors launch; it reads JSON-RPC on stdin. "
    b"From a shell, use `coder-agent run` (see `coder-agent acp --help`).\n"
)


def run_acp() -> int:
    """`coder-agent acp`. The order matters: protect stdout, answer `initialize`, then load the runtime."""
    if os.isatty(0):  # typed in a terminal, not launched by an editor: say so, instead of a blank screen
        try:
            os.write(2, TTY_HINT)
        except OSError:
            pass
    from ..prestart.early import answer_initialize, reserve_stdout

    protocol_fd = reserve_stdout()
    from ..kit.masking import masked

    sys.stdout = sys.stderr = masked(sys.stderr)  # a stray print, a thread's traceback: no known secret in them
    from ..prestart.capabilities import initialize_result

    try:
        early = answer_initialize(0, protocol_fd, initialize_result)
        early = _answer_session_new(early, protocol_fd)
    except KeyboardInterrupt:  # Ctrl-C before the runtime is in: end as the full agent does, without a traceback
        return 0  # (the caller's `os._exit` ends the import thread)
    from ..prestart import early_exit

    if early.eof and early_exit.nothing_left(early):
        # The client closed our input and waits for nothing more: exit now, not once the runtime is in (the
        # caller's `os._exit` ends the import thread); what the client was shown is saved first.
        early_exit.keep(early)
        return 0

    from ..llm.loader import OFFLINE_ENV

    for key, value in OFFLINE_ENV.items():
        os.environ.setdefault(key, value)

    import logging

    import anyio

    from ..config.settings import Settings
    from ..config.workspace_dotenv import warn_about_workspace_dotenv
    from ..kit.logs import setup_logging
    from ..server.assembly import serve_stdio

    # An editor shows an agent that exits as merely dead: stay up, and refuse what needs a broken setting.
    settings = Settings.load(lenient=True)
    log_file = setup_logging(settings.log_level, settings.log_dir)
    warn_about_workspace_dotenv()
    log = logging.getLogger("coder_agent")
    for name, problem in settings.problems.items():
        log.error("%s: %s; requests that need it will be refused until it is fixed", name, problem)
    for notice in settings.notices:
        log.warning("%s", notice)
    log.info("coder-agent %s speaking ACP on stdio (model %s, log %s)", __version__, settings.model, log_file)
    from . import exit_deadline

    try:
        anyio.run(serve_stdio, settings, 0, protocol_fd, early, exit_deadline.start)
    except KeyboardInterrupt:
        pass
    log.info("input closed; exiting")
    logging.shutdown()
    return 0


HOLD_MAX = 1.0  # seconds the runtime's import waits for the first prompt's early call at most


def _import_runtime() -> None:
    """What serving needs, imported (~350 ms): in a thread, while the early reader waits for `session/new`."""
    import importlib

    # First what saving the early session needs, should the input end now (`prestart.early_exit`).
    importlib.import_module("coder_agent.store.sqlite")
    import logging  # noqa: F401

    import anyio  # noqa: F401

    from ..config import settings  # noqa: F401
    from ..server import assembly  # noqa: F401


def _answer_session_new(early: EarlyRead, out_fd: int) -> EarlyRead:
    """Answer a plain `session/new` early (`prestart.early_session`) while the runtime is imported in a thread,
    and stream the first prompt's first model call if it comes before the runtime is in (`prestart.early_prompt`).

    The reader stops waiting once the runtime is in: from then on the full agent answers as fast.
    """
    if early.initialize is None or early.eof:
        return early
    import threading

    from ..prestart.early import answer_next, wait_for_runtime
    from ..prestart.early_session import EarlySession, announce_commands, new_session_answerer
    from ..prestart.settings_peek import peek

    settings = peek()
    answer = new_session_answerer(settings)
    ready_read, ready_write = os.pipe()

    try_early_call = settings.exact and settings.model is not None
    preps: list[early_prompt.Prep] = []
    prepped = threading.Event()
    # The runtime's import waits while the reader has the first prompt's call to make (its CPU work shared with
    # the import, through the GIL, took twice as long): until the request is sent, the early call is not made,
    # or the reader waits for input.
    hold = threading.Event()

    def load() -> None:
        try:
            if try_early_call:
                # First what the early first call needs (the settings, the route, the tools' specs: ~40 ms), while
                # the reader waits for `session/new`; the runtime's import would only slow it down.
                try:
                    from ..prestart.early_prompt import Prep

                    prep = Prep()
                    prep.run()
                    preps.append(prep)
                finally:
                    prepped.set()
                hold.wait(HOLD_MAX)
            _import_runtime()
        finally:
            os.write(ready_write, b"!")

    importer = threading.Thread(target=load, name="import-runtime", daemon=True)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.0005)  # the reader gets the interpreter back within 0.5 ms when input comes
    importer.start()
    from ..prestart.early_exit import nothing_left

    guess = None
    if try_early_call:
        from ..prestart.early_prompt import SystemPrompt

        # Editors start the agent in the project's folder: its system prompt (git's answers: ~20 ms) is made now,
        # for a first prompt that comes at once; a session elsewhere gets its own.
        guess = SystemPrompt(os.getcwd(), [])
    try:
        early = answer_next(early, 0, out_fd, "session/new", answer, ready_read, hold.set)
        if isinstance(early.answered, EarlySession):  # its commands at once, not once the runtime is in
            announce_commands(early.answered, settings.config_dir, out_fd)
        if try_early_call and isinstance(early.answered, EarlySession):
            from ..prestart import early_prompt

            def prep() -> early_prompt.Prep | None:
                prepped.wait()
                return preps[0] if preps else None

            assert guess is not None
            system = guess.for_session(early.answered)  # git, in a thread
            early = early_prompt.run(early, 0, out_fd, ready_read, prep, system, hold.set)
        hold.set()
        # Until the runtime is in, the end of the input is watched for: the agent exits then (`run_acp`).
        early = wait_for_runtime(early, 0, ready_read, nothing_left)
    except BaseException:
        hold.set()
        sys.setswitchinterval(interval)
        raise
    if early.eof and nothing_left(early):
        # Exiting while the import runs on: the pipe stays open (the import thread still writes to it; a closed
        # fd's number could be reused by then), and the short switch interval stays (saving the early session).
        return early
    sys.setswitchinterval(interval)
    importer.join()
    os.close(ready_read)
    os.close(ready_write)
    return early
