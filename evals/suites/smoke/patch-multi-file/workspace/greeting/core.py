"""Greetings."""

from __future__ import annotations


def greet(name: str) -> str:
    """A greeting for `name`."""
    name = name.strip() or "stranger"
    return f"Hello, {name}!"
