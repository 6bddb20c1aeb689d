"""The shadow repository of one root: a git repository of the agent's own, kept in its data folder, whose work
tree is the user's project. Snapshots of the root are its index and its tree objects (`snapshots.py`).

Nothing is written into the user's `.git`: the shadow has its own git folder (`$CODER_AGENT_HOME/snapshots/<key>`),
and git is pointed at it and at the project's top folder on every call. The project is someone else's, so git
runs nothing it could name:

- no system or global config (`GIT_CONFIG_NOSYSTEM`, `GIT_CONFIG_GLOBAL=/dev/null`), none of the caller's `GIT_*`
  variables, and the shadow's own config switches off hooks, fsmonitor and every transport; no filter driver is
  defined anywhere git looks, so a `filter=` in the checkout names nothing;
- the shadow's `info/attributes`, which wins over every `.gitattributes` in the tree, unsets `text`, `eol`,
  `filter`, `ident` and `working-tree-encoding` for every path: the bytes kept are the bytes on disk;
- `.gitignore` files in the tree are honoured (that is the point), as is the project's `.git/info/exclude`
  (copied into the shadow's); folders that are repositories of their own are never added.

The folder is private (700, files 600: `core.sharedRepository=0600`). Every git call on one shadow holds its lock
(`flock`, so a process killed mid-call frees it; a stale `index.lock` left by such a call is removed under it).
Blocking: call it from a worker thread.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import logging
import os
import subprocess
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ...kit.credentials import child_environment
from ...kit.private import open_private, private_folder
from ...kit.untrusted import read_capped

log = logging.getLogger(__name__)

FOLDER = "snapshots"
GIT_TIMEOUT = 120.0  # one call; the first snapshot of a large tree hashes every file in it
LOCK_WAIT = 120.0
MAX_EXCLUDE_BYTES = 256 * 1024  # of the project's `.git/info/exclude`
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

# Appended to the config `git init` wrote (it probed the file system for `filemode`, `symlinks`, `ignorecase`).
# A split index: each pass writes the entries it changed, not the whole index again (6.8 MB at 100,000 files;
# git's time per turn there about halves). Its old shared parts go at once: every call holds the shadow's lock.
CONFIG = """
[core]
\tbare = false
\tautocrlf = false
\tsafecrlf = false
\tfsmonitor = false
\thooksPath = /dev/null
\tattributesFile = /dev/null
\tuntrackedCache = false
\tlogAllRefUpdates = false
\tsharedRepository = 0600
\tcompression = 1
\tlooseCompression = 1
\tfsync = none
\tquotePath = false
\tprecomposeUnicode = false
\tsplitIndex = true
[splitIndex]
\tsharedIndexExpire = now
[index]
\tversion = 4
[gc]
\tauto = 0
[pack]
\twindow = 0
[maintenance]
\tauto = false
[protocol]
\tallow = never
[submodule]
\trecurse = false
"""
ATTRIBUTES = "* -text -eol -crlf -filter -ident -working-tree-encoding -diff -merge -export-subst\n"


class ShadowError(Exception):
    """A git call on the shadow failed: `str()` says why, in a line."""


def shadow_folder(home: Path, root_real: str) -> Path:
    """Where the shadow of the (resolved) root `root_real` lives in the data folder `home`."""
    key = hashlib.sha256(os.fsencode(root_real)).hexdigest()[:24]
    return home / FOLDER / key


def git_environment() -> dict[str, str]:
    """The caller's environment without its credentials and without any `GIT_*` variable, and git's own config
    files left out."""
    environment = {key: value for key, value in child_environment().items() if not key.startswith("GIT_")}
    environment.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_ATTR_NOSYSTEM="1",
        GIT_NO_LAZY_FETCH="1",
        GIT_TERMINAL_PROMPT="0",
        GIT_LITERAL_PATHSPECS="1",  # a file named `*.py` is that file, not a glob
        LC_ALL="C",
    )
    return environment


def git_top(folder: str) -> str | None:
    """The folder that holds the `.git` nearest at or above `folder` (absolute), or None: outside git."""
    while True:
        if os.path.lexists(os.path.join(folder, ".git")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def top_of(root_real: str) -> str:
    """The folder that holds the `.git` nearest above `root_real` (its ignore rules apply), else the root."""
    return git_top(root_real) or root_real


def _why(done: subprocess.CompletedProcess[bytes]) -> str:
    lines = [line.strip() for line in done.stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    complaints = [line for line in lines if line.startswith(("fatal: ", "error: "))]
    text = (complaints or lines or [f"exit code {done.returncode}"])[0].removeprefix("fatal: ").removeprefix("error: ")
    return "".join(char if char.isprintable() else "?" for char in text)[:200]


@dataclass
class ShadowRepo:
    """The shadow of one root. `root`: the root resolved; `top`: the work tree git is given (the project's
    top folder, so ignore rules above the root apply); git runs in `root`, so paths are relative to it."""

    git_dir: Path
    root: str
    top: str
    excluded: Sequence[str] = ()  # extra ignore patterns (folders never worth keeping, the data folder itself)
    written: int = 0  # objects this process may have written since the shadow's objects were last counted

    @property
    def prefix(self) -> str:
        """The root's place in the work tree ("" at its top, else "a/b/")."""
        relative = os.path.relpath(self.root, self.top)
        return "" if relative == "." else relative.replace(os.sep, "/") + "/"

    def command(self, *args: str, config: Sequence[str] = ()) -> list[str]:
        """The command line of `git ARGS` on the shadow (with `-c` `config`), to run in `root`."""
        command = ["git", f"--git-dir={self.git_dir}", f"--work-tree={self.top}"]
        for item in ("core.hooksPath=/dev/null", "core.fsmonitor=false", *config):
            command += ["-c", item]
        return [*command, *args]

    def run(
        self, *args: str, stdin: bytes | None = None, config: Sequence[str] = (), timeout: float = GIT_TIMEOUT
    ) -> bytes:
        """`git ARGS` on the shadow (with `-c` `config`); its stdout. Raises `ShadowError`."""
        try:
            done = subprocess.run(
                self.command(*args, config=config),
                cwd=self.root,
                input=stdin if stdin is not None else b"",
                capture_output=True,
                env=git_environment(),
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise ShadowError(f"git {args[0]} took longer than {timeout:g} s") from None
        except OSError as exc:
            raise ShadowError(f"git could not be run: {exc.strerror or exc}") from None
        if done.returncode != 0:
            raise ShadowError(f"git {args[0]}: {_why(done)}")
        return done.stdout

    @contextlib.contextmanager
    def locked(self, wait: float = LOCK_WAIT, prepare: bool = True) -> Iterator[None]:
        """Hold the shadow for one pass (made and set up first, unless not `prepare`): across threads and
        processes."""
        private_folder(self.git_dir)
        fd = open_private(self.git_dir / "coder-agent.lock", os.O_RDWR)
        try:
            deadline = time.monotonic() + wait
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError as exc:
                    if exc.errno not in (errno.EAGAIN, errno.EACCES) or time.monotonic() > deadline:
                        raise ShadowError(f"the snapshot folder {self.git_dir} stayed busy") from None
                    time.sleep(0.02)  # a worker thread: another process's pass takes a few ms
            if prepare:
                self._prepare()
            yield
        finally:
            os.close(fd)

    def _prepare(self) -> None:
        if not (self.git_dir / "HEAD").exists():
            self._init()
        stale = self.git_dir / "index.lock"
        if stale.exists():  # we hold the lock: a git call killed with its process left it
            log.info("removing %s, left by a git call that did not finish", stale)
            stale.unlink(missing_ok=True)
        self._write_if_changed(self.git_dir / "info" / "attributes", ATTRIBUTES)
        self._write_if_changed(self.git_dir / "info" / "exclude", self._exclude_text())

    def _init(self) -> None:
        self.run("init", "--quiet", "--template=")
        with (self.git_dir / "config").open("a", encoding="utf-8") as config:
            config.write(CONFIG)
        private_folder(self.git_dir / "info")
        (self.git_dir / "root").write_text(self.root + "\n", encoding="utf-8")
        for path in self.git_dir.rglob("*"):  # what `git init` made before the config said 0600
            os.chmod(path, 0o700 if path.is_dir() else 0o600)

    def _exclude_text(self) -> str:
        """The shadow's ignore rules beyond the tree's `.gitignore` files: the project's own `info/exclude`, and
        `excluded`."""
        text = "".join(f"{pattern}\n" for pattern in self.excluded)
        project = os.path.join(self.top, ".git", "info", "exclude")
        if os.path.isdir(os.path.join(self.top, ".git")):
            try:
                got = read_capped(project, MAX_EXCLUDE_BYTES, [os.path.join(self.top, ".git")])
                text += got.data.decode("utf-8", "replace")
            except OSError:
                pass  # none, or not a regular file: no rules from it
        return text

    @staticmethod
    def _write_if_changed(path: Path, text: str) -> None:
        try:
            if path.read_text(encoding="utf-8") == text:
                return
        except (OSError, UnicodeDecodeError):
            pass
        fd = open_private(path, os.O_WRONLY | os.O_TRUNC)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)

    def count_objects(self) -> tuple[int, int]:
        """(loose objects, packs)."""
        fields = dict(
            line.split(": ", 1) for line in self.run("count-objects", "-v").decode().splitlines() if ": " in line
        )
        return int(fields.get("count", 0)), int(fields.get("packs", 0))
