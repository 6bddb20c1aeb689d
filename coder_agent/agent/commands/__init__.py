"""Slash commands."""

from .base import Command, CommandServices, Invocation, parse
from .catalog import Commands, Resolved

__all__ = ["Command", "CommandServices", "Commands", "Invocation", "Resolved", "parse"]
