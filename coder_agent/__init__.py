"""coder-agent: a coding agent that editors talk to over the Agent Client Protocol."""

__version__ = "0.1.0"
