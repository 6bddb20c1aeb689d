"""Errors worded for the person at the command line: one line each, saying where and what."""

from __future__ import annotations

from pydantic import ValidationError


def one_line(exc: ValidationError) -> str:
    """`field: problem; other.field: problem` (pydantic's own text takes several lines and a URL per error)."""
    parts = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(part) for part in error["loc"])
        parts.append(f"{where}: {error['msg']}" if where else str(error["msg"]))
    return "; ".join(parts)
