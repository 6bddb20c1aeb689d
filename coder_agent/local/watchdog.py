"""The agent's command groups die with the agent, however it dies.

`terminals.LocalTerminals` kills a command's process group when it is killed or released, and when the
command exits; but a `kill -9` of the agent runs none of that, and the groups (their own sessions, so no
terminal hang-up reaches them) would live on.
What cleans up must live outside the agent: one small `/bin/sh` loop per agent process, started at the first
local command. Its stdin is a pipe whose write end only the agent holds (close-on-exec, so commands never
inherit it). The agent writes `+PGID` when a group starts and `-PGID` once it is gone; when the pipe reaches
end-of-file — the agent exited or was killed, by any means — the loop sends SIGTERM to every group still
registered, then SIGKILL a second later, and exits. A clean exit leaves no group registered: it just exits.

It runs in its own session (a signal to the agent's process group does not reach it), with stdout and
stderr on /dev/null (never the protocol's stdout). One per process: the agent is one process, and the pipe
must close exactly when that process ends.
"""

from __future__ import annotations

import logging
import os
import subprocess
import threading

log = logging.getLogger(__name__)

SHELL = "/bin/sh"
GRACE_SECONDS = 1  # between the SIGTERM and the SIGKILL of the groups an agent left behind

# dash and bash alike: `kill -s SIG -- -PGID` signals a whole group.
SCRIPT = """
trap '' INT HUP QUIT
groups=' '
while IFS= read -r line; do
  id=${line#?}
  case $id in ''|*[!0-9]*) continue ;; esac
  case $line in
    +*) case $groups in *" $id "*) ;; *) groups="$groups$id " ;; esac ;;
    -*) case $groups in *" $id "*) groups="${groups%% $id *} ${groups#* $id }" ;; esac ;;
  esac
done
[ "$groups" = ' ' ] && exit 0
for id in $groups; do kill -s TERM -- "-$id" 2>/dev/null; done
sleep GRACE
for id in $groups; do kill -s KILL -- "-$id" 2>/dev/null; done
""".replace("GRACE", str(GRACE_SECONDS))


class Watchdog:
    """Registers process groups with the watchdog process (started on first use; restarted if it died)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # in-process tests run commands from several event loops
        self._process: subprocess.Popen[bytes] | None = None
        self._pipe: int | None = None  # the write end; nobody else holds it
        self._groups: set[int] = set()
        self._unsent = bytearray()  # what a full pipe did not take yet: sent before anything else

    @property
    def pid(self) -> int | None:
        """The watchdog process's id, once started."""
        return None if self._process is None else self._process.pid

    def start(self) -> None:
        """Make sure the watchdog runs (cheap once it does); a failure is logged, never raised."""
        with self._lock:
            self._ensure_running()

    def watch(self, pgid: int) -> None:
        """Kill group `pgid` if this process dies before `forget(pgid)`."""
        with self._lock:
            self._send(f"+{pgid}\n")
            self._groups.add(pgid)

    def forget(self, pgid: int) -> None:
        """Group `pgid` is gone (or no longer ours to kill)."""
        with self._lock:
            self._groups.discard(pgid)
            self._send(f"-{pgid}\n")

    def close(self) -> None:
        """Close our end of the pipe, as our death would: the watchdog kills what is still registered, and exits."""
        with self._lock:
            if self._pipe is not None:
                os.close(self._pipe)
                self._pipe = None
            self._groups.clear()
            self._unsent.clear()

    def _ensure_running(self) -> bool:
        if self._pipe is not None and self._process is not None and self._process.poll() is None:
            return True
        self._discard()
        read_end, write_end = os.pipe()  # both close-on-exec: no command inherits either end
        try:
            self._process = subprocess.Popen(
                [SHELL, "-c", SCRIPT],
                stdin=read_end,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                env={"PATH": os.environ.get("PATH") or os.defpath},
            )
        except OSError as exc:
            os.close(write_end)
            log.warning("no watchdog for local commands (%s): they may outlive a killed agent", exc)
            return False
        finally:
            os.close(read_end)
        os.set_blocking(write_end, False)  # never stall the event loop on a stopped watchdog
        self._pipe = write_end
        log.debug("watchdog %d started", self._process.pid)
        if self._groups:  # a restart: the new watchdog takes over the groups the old one knew
            self._write("".join(f"+{pgid}\n" for pgid in sorted(self._groups)), retry=False)
        return True

    def _discard(self) -> None:
        """Let go of a watchdog that died (or is dying): its pipe is closed; Popen reaps it later."""
        if self._pipe is not None:
            os.close(self._pipe)
            self._pipe = None
        self._process = None
        self._unsent.clear()  # a new watchdog learns every group at its start

    def _send(self, line: str) -> None:
        if self._ensure_running():
            self._write(line)

    def _write(self, data: str, retry: bool = True) -> None:
        assert self._pipe is not None
        self._unsent += data.encode()
        try:
            while self._unsent:
                del self._unsent[: os.write(self._pipe, self._unsent)]
        except BlockingIOError:  # a burst outran it: the rest goes out with the next line
            log.debug("the watchdog's pipe is full; %d bytes wait", len(self._unsent))
        except BrokenPipeError:  # it died (someone killed it): a new one takes over every group
            log.warning("the watchdog of local commands exited; starting another")
            self._discard()
            if retry and self._ensure_running():
                self._write(data, retry=False)


WATCHDOG = Watchdog()  # the agent process's one watchdog (see the module's docstring for why one per process)
