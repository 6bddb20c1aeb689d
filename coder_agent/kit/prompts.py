"""Prompt templates live as files under `prompts/` (shipped in the wheel as `coder_agent/prompts/`)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from string import Template

from .modes import MODES

_PACKAGE = Path(__file__).resolve().parent.parent


@cache
def prompts_dir() -> Path:
    for candidate in (_PACKAGE / "prompts", _PACKAGE.parent / "prompts"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("the prompts/ folder is missing from this installation")


@cache
def read_prompt(name: str) -> str:
    """`prompts/<name>` as it is (tool descriptions: no placeholders); read from disk once."""
    return (prompts_dir() / name).read_text(encoding="utf-8").strip()


@cache
def _template(name: str) -> Template:
    return Template((prompts_dir() / name).read_text(encoding="utf-8"))


def render(name: str, **values: str) -> str:
    """Render `prompts/<name>`; a placeholder without a value is an error, not a silent blank."""
    return _template(name).substitute(values).strip() + "\n"


def system_text(system_prompt: str, mode_id: str) -> str:
    """The system message the model gets: the system prompt, then what the session's mode allows."""
    mode = next((m for m in MODES if m.id == mode_id), MODES[1])
    note = render("modes.md", mode=mode.name, description=(mode.description or "").lower())
    return f"{system_prompt}\n{note}"
