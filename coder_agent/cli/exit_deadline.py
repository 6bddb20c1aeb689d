"""Once its input ends, `coder-agent acp` is gone within `EXIT_BUDGET`, whatever is still stopping.

Clients end an agent by closing its stdin, and wait for it to go (the official TCK's ACP-SHUTDOWN-001 allows half
a second). The orderly way out is fast (turns are cancelled at once, what they were doing is saved as they go),
but some of what stops is not ours to hurry: an MCP server the SDK gives two seconds to go after its input
closes, a thread in a blocking call. So a clock starts when the input ends; when it runs out, the child
processes still there are ended (SIGTERM to their groups, SIGKILL shortly after, as the SDK and the watchdog
would) and the process exits. Nothing the client was shown is lost by it: every update is stored before it is
sent, in SQLite transactions that a cut leaves whole (as after a `kill -9`, which loses nothing either; a turn
cut short is repaired on its next load).
"""

from __future__ import annotations

import logging
import os
import sys
import threading

log = logging.getLogger(__name__)

EXIT_BUDGET = 0.25  # seconds from the end of the input to ending what is left (the children get KILL_GRACE more)
KILL_GRACE = 0.05  # between the SIGTERM and the SIGKILL of the children still there then


def start(budget: float = EXIT_BUDGET) -> None:
    """Start the clock (the input ended): the process exits within `budget` seconds, stopped or not."""
    timer = threading.Timer(budget, _exit_now, (budget,))
    timer.daemon = True
    timer.name = "exit-deadline"
    timer.start()


def _exit_now(budget: float) -> None:
    from ..local.process_groups import end_children
    from ..local.watchdog import WATCHDOG

    log.info("still stopping %.2f s after the input ended: ending the child processes left, and exiting", budget)
    try:
        spare = [WATCHDOG.pid] if WATCHDOG.pid is not None else []  # it ends the commands' groups itself
        end_children(KILL_GRACE, spare)
    finally:
        for handler in logging.getLogger().handlers:
            try:
                handler.flush()
            except Exception:  # the process is going: a log that cannot be flushed must not keep it
                pass
        try:
            sys.stderr.flush()
        except OSError:
            pass
        os._exit(0)
