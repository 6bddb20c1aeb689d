"""What `coder-agent acp --help` says: what the command is for, every setting, and where its files are.

The settings are listed from the `Settings` model itself (names, defaults, descriptions), so the help cannot
fall behind it. Nothing here creates a file or a folder.
"""

from __future__ import annotations

import argparse
import os
import shutil
import textwrap
from collections.abc import Mapping
from pathlib import Path

from pydantic.fields import FieldInfo

from ..config.settings import Settings, config_dir, home_of
from ..config.sources import merge_user_dotenv
from ..kit.credentials import PREFIX

DESCRIPTION = """\
Speak the Agent Client Protocol (ACP v1: newline-delimited JSON-RPC 2.0) on stdin and stdout.
Editors (Zed, JetBrains IDEs, any ACP client) launch this command and talk to it; started by hand
in a terminal it only waits for JSON-RPC on stdin. To give the agent a task from a shell, use
`coder-agent run` (see `coder-agent run --help`); to read saved sessions, `coder-agent sessions`."""


def resolved_folders(environ: Mapping[str, str]) -> tuple[Path, Path]:
    """(data folder, config folder) as `Settings.load` finds them: the environment, the user's `.env`, the default."""
    env = dict(environ)
    merge_user_dotenv(env)
    return home_of(env).absolute(), config_dir(env).absolute()


def _default(name: str, field: FieldInfo) -> str:
    if name == "home":  # computed by `Settings.load`, from the environment
        return "$XDG_DATA_HOME/coder-agent, else ~/.local/share/coder-agent"
    if name == "config_dir":
        return "$XDG_CONFIG_HOME/coder-agent, else ~/.config/coder-agent"
    if field.is_required():
        return "none: required"
    value = field.get_default(call_default_factory=True)
    if value is None or value == []:
        return "unset"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _entry(left: str, right: str, column: int, width: int) -> str:
    """`left` in a column, `right` beside it, wrapped under itself (`left` is shorter than the column)."""
    indent = f"  {left:<{column - 2}}"
    return textwrap.fill(right, width, initial_indent=indent, subsequent_indent=" " * column, break_on_hyphens=False)


def settings_text(width: int) -> str:
    names = {name: PREFIX + name.upper() for name in Settings.model_fields}
    column = max(len(name) for name in names.values()) + 4
    lines = ["settings (from the environment, then your .env files, then the config files below):"]
    for name, field in Settings.model_fields.items():
        meaning = (field.description or "").rstrip(".")
        if field.annotation is not None and getattr(field.annotation, "__origin__", None) is list:
            meaning += ", comma-separated"
        lines.append(_entry(names[name], f"{meaning} (default: {_default(name, field)})", column, width))
    return "\n".join(lines)


def files_text(home: Path, config: Path, width: int) -> str:
    column = 16
    settings = f"{config / 'config.toml'} (in $XDG_CONFIG_HOME/coder-agent): the settings above in lower case, "
    settings += f'without the {PREFIX} prefix (model = "anthropic/claude-sonnet-4-5"); the environment wins'
    entries = [
        ("config file", settings),
        ("old config", f"{home / 'config.toml'} ($CODER_AGENT_HOME/config.toml): still read, after the one above"),
        ("saved keys", f"{config / 'credentials.toml'}: written by `coder-agent login`"),
        ("rules", f"{config / 'rules.toml'}: lasting permission rules (`coder-agent rules`)"),
        ("MCP servers", f"{config / 'mcp.json'}: yours, besides the editor's"),
        ("log file", f"{home / 'logs' / 'coder-agent.log'} ($CODER_AGENT_HOME/logs/coder-agent.log); also stderr"),
        ("sessions", f"{home / 'sessions.db'} ($CODER_AGENT_HOME/sessions.db)"),
    ]
    return "\n".join(["files (for this user, now):", *(_entry(left, right, column, width) for left, right in entries)])


def acp_parser() -> argparse.ArgumentParser:
    width = max(shutil.get_terminal_size().columns - 2, 60)
    epilog = settings_text(width) + "\n\n" + files_text(*resolved_folders(os.environ), width)
    return argparse.ArgumentParser(
        prog="coder-agent acp",
        description=DESCRIPTION,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
