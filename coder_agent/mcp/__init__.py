"""Tools from the session's MCP servers (the editor's `mcpServers`), offered to the model as `mcp__<server>__<tool>`.

Importing this package does not import the mcp SDK; `McpServers.run` loads it in a worker thread.
"""

from .names import sanitise
from .servers import McpServers

__all__ = ["McpServers", "sanitise"]
