"""What the ACP method handlers share: the client, the sessions, their turns and config, the settings.

`settings` may be replaced while the agent runs (a login read again): read it from here each time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import anyio.abc

from ..acp.schema import ClientCapabilities, SessionStateResponse
from ..agent.client import Client
from ..agent.prompting import Turns
from ..agent.sessions.live import Sessions
from ..agent.sessions.options import SessionConfig
from ..agent.sessions.session import Session
from ..config.settings import Settings

if TYPE_CHECKING:
    from .session_mcp import SessionMcp


@dataclass
class AgentState:
    client: Client
    set_client_capabilities: Callable[[ClientCapabilities], None]
    settings: Settings
    sessions: Sessions
    turns: Turns
    config: SessionConfig
    background: anyio.abc.TaskGroup
    mcp: SessionMcp  # where each session's MCP servers come from
    remote: bool = False  # a client of `coder-agent serve`: the operator's own files (saved keys) are not its to change

    def state_of(self, session: Session) -> SessionStateResponse:
        return SessionStateResponse(modes=self.config.modes(session), config_options=self.config.options(session))
