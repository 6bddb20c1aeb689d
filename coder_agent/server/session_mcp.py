"""Where a session's MCP servers come from, and starting them: the editor, the user's own config, the project.

In order, the first server of a name winning:

1. the servers the editor names (`mcpServers` of `session/new`, `load`, `resume`, `fork`);
2. the user's `mcp.json` in the config folder, and the files `CODER_AGENT_MCP_CONFIG` names
   (`coder-agent run --mcp-config FILE`);
3. the project's `.mcp.json` (in the session's cwd), only once the user approved it: it starts processes, and
   the project may be someone else's. The first prompt of a session asks (`session/request_permission`, before
   the turn); a lasting answer is kept in the user's config keyed by the file's path and content hash, so a
   file that changes is asked about again. The project decides what that path is: only a regular file inside the
   session's roots is read (`mcp.config_files.read`); one that is not, or cannot be used, is logged, and the
   user is told at the first prompt that its servers were not started and why.

Servers connect in the background: nobody waits for them here.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

import anyio.abc

from ..acp.schema import (
    AgentMessageChunk,
    ContentToolCallContent,
    McpServer,
    PermissionOption,
    TextContent,
    ToolCallFields,
    ToolCallProgress,
    ToolCallStart,
)
from ..agent.client import Client
from ..agent.errors import ClientError
from ..agent.sessions.session import Session, new_id
from ..config.settings import Settings
from ..config.userfiles import MCP_FILE
from ..mcp import McpServers
from ..mcp.config_files import McpConfigError, McpFile, describe, read
from ..mcp.trust import ProjectTrust

log = logging.getLogger(__name__)

PROJECT_FILE = ".mcp.json"
TRUST, ONCE, NOT_NOW, NEVER = "trust_project_mcp", "allow_once", "reject_once", "reject_always"
APPROVAL_OPTIONS = [
    PermissionOption(option_id=TRUST, name="Trust them (asked again if the file changes)", kind="allow_always"),
    PermissionOption(option_id=ONCE, name="Start them for this session", kind="allow_once"),
    PermissionOption(option_id=NOT_NOW, name="Not now", kind="reject_once"),
    PermissionOption(option_id=NEVER, name="Never for this file", kind="reject_always"),
]


def text_content(text: str) -> ContentToolCallContent:
    return ContentToolCallContent(content=TextContent(text=text))


def merged(*groups: Sequence[McpServer]) -> list[McpServer]:
    """The servers of every group, the first of each name winning."""
    seen: dict[str, McpServer] = {}
    for group in groups:
        for server in group:
            if server.name in seen:
                log.info("MCP server %s is named twice; the first one is used", server.name)
                continue
            seen[server.name] = server
    return list(seen.values())


class SessionMcp:
    def __init__(self, settings: Callable[[], Settings], client: Client, background: anyio.abc.TaskGroup) -> None:
        self._settings = settings
        self._client = client
        self._background = background
        self._editor: dict[str, list[McpServer]] = {}
        self._pending: dict[str, McpFile] = {}  # session -> the project file the user has not answered yet
        self._unusable: dict[str, str] = {}  # session -> why its project file was not used, told at its first prompt
        self._reported: set[str] = set()
        self._on_ready: dict[str, Callable[[], Awaitable[None]]] = {}  # session -> when its servers are up

    def _warn_once(self, message: str) -> None:
        if message not in self._reported:
            self._reported.add(message)
            log.warning("%s", message)

    def _read(self, path: Path) -> McpFile | None:
        try:
            found = read(path)
        except McpConfigError as exc:
            self._warn_once(f"{exc}; its MCP servers are not used")
            return None
        for problem in found.problems if found else ():
            self._warn_once(problem)
        return found

    def user_servers(self) -> list[McpServer]:
        """The servers of the user's `mcp.json` and of the files `CODER_AGENT_MCP_CONFIG` names."""
        settings = self._settings()
        paths = [settings.config_dir / MCP_FILE] if settings.config_dir is not None else []
        paths += [Path(name).expanduser() for name in settings.mcp_config]
        servers: list[McpServer] = []
        for path in paths:
            found = self._read(path)
            if found is None and path.name != MCP_FILE:
                self._warn_once(f"the MCP config file {path} does not exist")
            servers += found.servers if found else []
        return servers

    def project_file(self, cwd: str, roots: Sequence[str]) -> McpFile | str | None:
        """The project's `.mcp.json`, when it names servers and the user did not already give it explicitly; why
        it cannot be used, when it is there but cannot be (not read, or not a valid config)."""
        path = Path(cwd) / PROJECT_FILE
        given = [Path(name).expanduser() for name in self._settings().mcp_config]
        try:
            if any(path.samefile(other) for other in given if other.exists()):
                return None  # named by the user (`--mcp-config`): consented already
        except OSError:
            return None
        try:
            found = read(path, roots)
        except McpConfigError as exc:
            self._warn_once(f"{exc}; its MCP servers are not used")
            return str(exc)
        for problem in found.problems if found else ():
            self._warn_once(problem)
        return found if found is not None and found.servers else None

    def _trust(self) -> ProjectTrust | None:
        folder = self._settings().config_dir
        return ProjectTrust(folder) if folder is not None else None

    async def attach(
        self,
        session: Session,
        editor_servers: Sequence[McpServer],
        on_ready: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        """Start the session's servers (those of a project the user approved among them); `on_ready` once they
        are up (their prompts are known then)."""
        self._editor[session.id] = list(editor_servers)
        if on_ready is not None:
            self._on_ready[session.id] = on_ready
        self._pending.pop(session.id, None)
        self._unusable.pop(session.id, None)
        groups = [editor_servers, self.user_servers()]
        project = self.project_file(session.cwd, session.roots)
        if isinstance(project, str):
            self._unusable[session.id] = project
        elif project is not None:
            trust = self._trust()
            decision = trust.decision(project.path, project.digest) if trust is not None else None
            if decision == "allow":
                groups.append(project.servers)
            elif decision is None:
                self._pending[session.id] = project
                log.info("%s names MCP servers; the user is asked at the first prompt", project.path)
        await self._start(session, merged(*groups))

    def forget(self, session_id: str) -> None:
        self._editor.pop(session_id, None)
        self._pending.pop(session_id, None)
        self._unusable.pop(session_id, None)
        self._on_ready.pop(session_id, None)

    async def settle_project(self, session: Session) -> None:
        """Before a prompt: ask about the project's `.mcp.json` if nobody has yet, and start its servers if allowed;
        or tell the user why it was not used."""
        unusable = self._unusable.pop(session.id, None)
        if unusable is not None:
            text = f"The project's MCP servers were not started: {unusable}."
            notice = AgentMessageChunk(content=TextContent(text=text), message_id=new_id("notice"))
            await session.publish(notice, keep=False)
        project = self._pending.pop(session.id, None)
        if project is None:
            return
        if await self._approved(session, project):
            servers = merged(self._editor.get(session.id, []), self.user_servers(), project.servers)
            await self._start(session, servers)

    async def _approved(self, session: Session, project: McpFile) -> bool:
        call_id = new_id("mcp_approval")
        listed = "\n".join(f"- {server.name}: {describe(server)}" for server in project.servers)
        text = (
            f"The project's {project.path.name} ({project.path}) names MCP servers. They run as you, with your "
            f"permissions:\n{listed}"
        )
        title = f"Start the MCP servers of {project.path}?"
        raw = {"file": str(project.path), "servers": {server.name: describe(server) for server in project.servers}}
        shown = ToolCallFields(
            tool_call_id=call_id,
            title=title,
            kind="execute",
            status="pending",
            content=[text_content(text)],
            locations=[],
            raw_input=raw,
        )
        await session.publish(ToolCallStart(**dict(shown)), keep=False)
        try:
            outcome = await self._client.request_permission(session.id, shown, APPROVAL_OPTIONS)
            chosen = outcome.option_id if outcome.outcome == "selected" else None
        except ClientError as exc:
            log.warning("could not ask about %s: %s; its servers are not started", project.path, exc.message)
            chosen = None
        trust = self._trust()
        if trust is not None and chosen in (TRUST, NEVER):
            trust.record(project.path, project.digest, "allow" if chosen == TRUST else "reject")
        allowed = chosen in (TRUST, ONCE)
        result = "Started." if allowed else "Not started."
        update = ToolCallProgress(
            tool_call_id=call_id, status="completed" if allowed else "failed", content=[text_content(result)]
        )
        await session.publish(update, keep=False)
        log.info("%s: the user chose %s", project.path, chosen or "nothing")
        return allowed

    async def _start(self, session: Session, servers: Sequence[McpServer]) -> None:
        if not servers:
            await session.replace_tool_source(None)
            return

        async def report(message: str) -> None:
            notice = AgentMessageChunk(content=TextContent(text=message), message_id=new_id("notice"))
            await session.publish(notice, keep=False)

        settings = self._settings()
        mcp = McpServers(
            servers,
            connect_timeout=settings.mcp_timeout,
            call_timeout=settings.mcp_call_timeout,
            report=report,
            on_ready=self._on_ready.get(session.id),
            elicitation_modes=self._client.elicitation_modes(),
        )
        await session.replace_tool_source(mcp)
        self._background.start_soon(mcp.run)
