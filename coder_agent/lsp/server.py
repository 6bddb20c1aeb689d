"""One language server process for one root: started, initialized, given the agent's files, asked for diagnostics,
and stopped (or found gone).

`run` is the server's owner task: it starts the process in its own process group (registered with the watchdog,
so it dies with the agent even after a `kill -9`), and however it ends (`stop`, the session closing, the
connection cancelled, the server crashing) it kills what is left of the group before it returns.

When diagnostics are settled, and why: where the server answers pull diagnostics (`textDocument/diagnostic`),
the answer is the diagnostics of the text the agent just sent (the request follows the change on the same
ordered stream), so nothing is guessed. Otherwise the agent waits for the server's next `publishDiagnostics` of
the file after the change (of that version, when the server numbers them), then a short quiet spell for a
later one: some servers publish in stages (syntax first, then types). The caller bounds every wait.
"""

from __future__ import annotations

import logging
import os
import signal
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import anyio
import anyio.abc
from pydantic import ValidationError

from ..kit.credentials import child_environment
from ..local.process_groups import kill_group
from ..local.watchdog import WATCHDOG
from .connection import RETRY_CODES, Connection, LspError, ServerGone
from .launch import Launch
from .types import Diagnostic, DocumentDiagnosticReport, PublishDiagnostics

log = logging.getLogger(__name__)

START_TIMEOUT = 60.0  # from the process's start to its `initialize` answer; a server slower than this is stuck
SHUTDOWN_GRACE = 1.0  # for `shutdown` to be answered, then for the process to exit after `exit`
KILL_GRACE = 0.5  # between the SIGTERM and the SIGKILL of what is left of its group
QUIET = 0.2  # after a pushed result: how long a later one (a second stage) may take to replace it
STDERR_LINES = 20

CAPABILITIES: dict[str, Any] = {
    "general": {"positionEncodings": ["utf-16"]},
    "textDocument": {
        "synchronization": {"dynamicRegistration": False, "didSave": False},
        "publishDiagnostics": {"versionSupport": True},
        "diagnostic": {"dynamicRegistration": False, "relatedDocumentSupport": False},
    },
    "workspace": {"configuration": True, "workspaceFolders": True, "applyEdit": False},
    "window": {"workDoneProgress": False},
}


def path_of(uri: str) -> str | None:
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else None


@dataclass
class _Document:
    version: int
    text: str
    changed_at: int  # the publish count when this version was sent


@dataclass
class _Published:
    version: int | None
    diagnostics: list[Diagnostic]
    count: int  # which publish of the server's this was


class LanguageServer:
    def __init__(self, launch: Launch) -> None:
        self.launch = launch
        self.name = launch.spec.name
        self.ready = anyio.Event()  # set once initialized, or once gone
        self.finished = anyio.Event()  # `run` has returned: the process is gone
        self.down = anyio.Event()  # set with `gone`: it will answer nothing more
        self.gone: str | None = None
        self.pid: int | None = None
        self._connection: Connection | None = None
        self._stop = anyio.Event()
        self._starting = anyio.CancelScope()  # `stop` cancels a start still waiting for `initialize`
        self._pull = False
        self._documents: dict[str, _Document] = {}
        self._locks: dict[str, anyio.Lock] = {}
        self._published: dict[str, _Published] = {}
        self._publishes = 0
        self._publish_seen = anyio.Event()
        self._stderr: deque[str] = deque(maxlen=STDERR_LINES)

    # ---- lifecycle -------------------------------------------------------------------------------------------

    async def run(self) -> None:
        """Start the server and serve it until it is stopped or gone; never raises (the reason is in `gone`)."""
        launch = self.launch
        try:
            process = await anyio.open_process(
                [launch.program, *launch.spec.args],
                cwd=launch.root,
                env=child_environment(),
                start_new_session=True,  # a group of its own: killed whole, by us or by the watchdog
            )
        except OSError as exc:
            self._end(f"could not start {launch.program}: {exc}")
            self.finished.set()
            return
        self.pid = process.pid
        WATCHDOG.watch(process.pid)
        log.info("started %s (pid %d) for %s", launch.program, process.pid, launch.root)
        try:
            await self._serve(process)
        except Exception as exc:  # a bug of ours must not take the session down
            log.exception("language server %s failed", self.name)
            self._end(f"failed: {type(exc).__name__}: {exc}")
        finally:
            with anyio.CancelScope(shield=True):
                await self._reap(process)
                self.finished.set()

    def stop(self) -> None:
        self._stop.set()
        self._starting.cancel()

    async def _serve(self, process: anyio.abc.Process) -> None:
        assert process.stdin is not None and process.stdout is not None and process.stderr is not None
        connection = Connection(process.stdout, process.stdin, self._on_request, self._on_notification)
        self._connection = connection
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(self._drain, process.stderr)
            tasks.start_soon(self._connect, connection, process)
            with self._starting:
                try:
                    with anyio.fail_after(START_TIMEOUT):
                        result = await connection.request("initialize", self._initialize_params())
                except TimeoutError:
                    self._end(f"did not answer initialize within {START_TIMEOUT:g} s")
                except (ServerGone, LspError) as exc:
                    await self._ended_by(process, str(exc))
                else:
                    self._initialized(connection, result)
            await self._stop.wait()
            if self.gone is None and self.ready.is_set():  # initialized, and asked to stop
                await self._shut_down(connection)
            tasks.cancel_scope.cancel()

    def _initialized(self, connection: Connection, result: Any) -> None:
        capabilities = result.get("capabilities", {}) if isinstance(result, dict) else {}
        self._pull = bool(isinstance(capabilities, dict) and capabilities.get("diagnosticProvider"))
        connection.notify("initialized", {})
        if self.launch.settings:
            connection.notify("workspace/didChangeConfiguration", {"settings": dict(self.launch.settings)})
        log.info("%s is ready for %s (%s diagnostics)", self.name, self.launch.root, "pull" if self._pull else "push")
        self.ready.set()

    async def _connect(self, connection: Connection, process: anyio.abc.Process) -> None:
        await connection.serve()
        if not self._stop.is_set():  # not asked to stop: it exited or broke by itself
            await self._ended_by(process, connection.ended or "its output ended")

    async def _ended_by(self, process: anyio.abc.Process, why: str) -> None:
        """The connection ended on the server's side: say how the process ended, if it did (bounded)."""
        code = None
        with anyio.move_on_after(SHUTDOWN_GRACE):
            code = await process.wait()
        if code is not None and code < 0:
            try:
                why = f"it was killed by {signal.Signals(-code).name}"
            except ValueError:
                why = f"it was killed by signal {-code}"
        elif code is not None:
            why = f"it exited with code {code}"
        if self._stderr:
            why = f"{why}: {self._stderr[-1]}"
        self._end(why)

    def _end(self, why: str) -> None:
        if self.gone is None:
            self.gone = why
            if not self._stop.is_set():
                log.warning("language server %s stopped (%s)", self.name, why)
        self._stop.set()
        self.ready.set()
        self.down.set()
        self._publish_seen.set()

    async def _shut_down(self, connection: Connection) -> None:
        """The polite end: `shutdown`, then `exit` (bounded; `_reap` kills whatever is left)."""
        with anyio.move_on_after(SHUTDOWN_GRACE):
            try:
                await connection.request("shutdown", None)
                connection.notify("exit", None)
            except (ServerGone, LspError):
                pass
        self.gone = self.gone or "stopped"

    async def _reap(self, process: anyio.abc.Process) -> None:
        self._stop.set()  # ours to end now (asked to, or its session's tasks were cancelled): no warning
        with anyio.move_on_after(SHUTDOWN_GRACE):
            if process.stdin is not None:
                await process.stdin.aclose()
            await process.wait()
        await kill_group(process.pid, KILL_GRACE)  # what it started too, and itself if it ignored `exit`
        WATCHDOG.forget(process.pid)
        with anyio.move_on_after(SHUTDOWN_GRACE):
            await process.aclose()
        self._end(self.gone or "stopped")

    async def _drain(self, stderr: anyio.abc.ByteReceiveStream) -> None:
        """Its stderr, read as it comes (a full pipe would stall it), the last lines kept for a crash's report."""
        pending = b""
        async for chunk in stderr:
            lines = (pending + chunk).split(b"\n")
            pending = lines.pop()[-4096:]
            for line in lines:
                text = line.decode("utf-8", "replace").strip()
                if text:
                    self._stderr.append(text[:300])
                    log.debug("%s: %s", self.name, text[:300])

    def _initialize_params(self) -> dict[str, Any]:
        root = self.launch.root
        params: dict[str, Any] = {
            "processId": os.getpid(),  # servers that watch their parent exit when the agent is gone
            "clientInfo": {"name": "coder-agent"},
            "rootUri": Path(root).as_uri(),
            "rootPath": root,
            "workspaceFolders": [{"uri": Path(root).as_uri(), "name": os.path.basename(root) or root}],
            "capabilities": CAPABILITIES,
        }
        if self.launch.initialization_options is not None:
            params["initializationOptions"] = dict(self.launch.initialization_options)
        return params

    # ---- what the server asks and says -----------------------------------------------------------------------

    def _on_request(self, method: str, params: Any) -> Any:
        if method == "workspace/configuration":
            items = params.get("items", []) if isinstance(params, dict) else []
            return [self._setting(item.get("section") if isinstance(item, dict) else None) for item in items]
        if method == "workspace/workspaceFolders":
            root = self.launch.root
            return [{"uri": Path(root).as_uri(), "name": os.path.basename(root) or root}]
        if method in ("client/registerCapability", "client/unregisterCapability", "window/workDoneProgress/create"):
            return None
        if method == "window/showMessageRequest":
            return None
        if method == "workspace/applyEdit":  # a server never edits the user's files
            return {"applied": False, "failureReason": "this client applies no edits"}
        raise LspError(-32601, f"{method} is not supported")

    def _setting(self, section: Any) -> Any:
        value: Any = self.launch.settings
        for part in section.split(".") if isinstance(section, str) and section else []:
            value = value.get(part) if isinstance(value, Mapping) else None
        return dict(value) if isinstance(value, Mapping) else value

    def _on_notification(self, method: str, params: Any) -> None:
        if method == "textDocument/publishDiagnostics":
            try:
                published = PublishDiagnostics.model_validate(params)
            except ValidationError as exc:
                log.debug("%s published diagnostics we cannot read: %s", self.name, exc)
                return
            path = path_of(published.uri)
            if path is not None:
                self._publishes += 1
                self._published[path] = _Published(published.version, published.diagnostics, self._publishes)
                self._publish_seen.set()
                self._publish_seen = anyio.Event()
        elif method in ("window/logMessage", "window/showMessage") and isinstance(params, dict):
            log.debug("%s says: %s", self.name, str(params.get("message", ""))[:500])

    # ---- documents and their diagnostics ---------------------------------------------------------------------

    async def diagnostics(self, path: str, text: str) -> list[Diagnostic]:
        """The server's diagnostics of `path` holding `text` (sent to it first). Raises `ServerGone`; the caller
        bounds the wait."""
        await self.ready.wait()
        connection = self._connection
        if self.gone is not None or connection is None:
            raise ServerGone(self.gone or "not started")
        lock = self._locks.setdefault(path, anyio.Lock())
        async with lock:
            document = self._sync(connection, path, text)
            if self._pull:
                return await self._pulled(connection, path)
            return await self._pushed(path, document)

    def close_document(self, path: str) -> None:
        document = self._documents.pop(path, None)
        self._published.pop(path, None)
        if document is not None and self._connection is not None and self.gone is None:
            try:
                self._connection.notify("textDocument/didClose", {"textDocument": {"uri": Path(path).as_uri()}})
            except ServerGone:
                pass

    def _sync(self, connection: Connection, path: str, text: str) -> _Document:
        """Give the server `text` as the content of `path` (opened, or changed to it), unless it has it already."""
        document = self._documents.get(path)
        uri = Path(path).as_uri()
        if document is None:
            document = self._documents[path] = _Document(1, text, self._publishes)
            item = {"uri": uri, "languageId": self.launch.spec.language_id(path), "version": 1, "text": text}
            connection.notify("textDocument/didOpen", {"textDocument": item})
        elif document.text != text:
            document.version += 1
            document.text = text
            document.changed_at = self._publishes
            change = {"textDocument": {"uri": uri, "version": document.version}, "contentChanges": [{"text": text}]}
            connection.notify("textDocument/didChange", change)
        return document

    async def _pulled(self, connection: Connection, path: str) -> list[Diagnostic]:
        params = {"textDocument": {"uri": Path(path).as_uri()}}
        for attempt in range(3):
            try:
                answer = await connection.request("textDocument/diagnostic", params)
            except LspError as exc:
                if exc.code in RETRY_CODES and attempt < 2:
                    continue
                raise ServerGone(f"it failed to give diagnostics: {exc}") from exc
            try:
                return DocumentDiagnosticReport.model_validate(answer).items
            except ValidationError as exc:
                raise ServerGone(f"it answered diagnostics we cannot read: {exc.errors()[0]['msg']}") from exc
        raise AssertionError("unreachable")

    def _fresh(self, path: str, document: _Document) -> _Published | None:
        published = self._published.get(path)
        if published is None or published.count <= document.changed_at:
            return None
        if published.version is not None and published.version < document.version:
            return None
        return published

    async def _pushed(self, path: str, document: _Document) -> list[Diagnostic]:
        while (published := self._fresh(path, document)) is None:
            if self.gone is not None:
                raise ServerGone(self.gone)
            await self._publish_seen.wait()
        with anyio.move_on_after(QUIET):  # a later stage of the same check replaces it
            while self.gone is None:
                await self._publish_seen.wait()
                published = self._fresh(path, document) or published
        return published.diagnostics
