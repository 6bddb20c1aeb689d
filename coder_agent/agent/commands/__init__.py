"""Slash commands: built-in ones, the user's and the project's Markdown files, MCP servers' prompts."""

from .base import Command, CommandServices, Invocation, parse
from .catalog import Commands, Resolved

__all__ = ["Command", "CommandServices", "Commands", "Invocation", "Resolved", "parse"]
