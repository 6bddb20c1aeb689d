"""The user's own files in the config folder, and writing them privately. Standard library only.

The config folder is `$CODER_AGENT_CONFIG_DIR`, else `$XDG_CONFIG_HOME/coder-agent` (`~/.config/coder-agent`).
It holds everything the user decides and the workspace must never decide for them:

- `config.toml`: settings (the data folder's `config.toml` is the old place, still read);
- `.env`: settings and provider keys, as environment variables;
- `credentials.toml`: keys saved by `coder-agent login` (600; or names of keys kept in the OS keyring);
- `rules.toml`: lasting permission rules, for all projects or per project path;
- `mcp.json`: the user's MCP servers; `trusted-projects.toml`: the projects' `.mcp.json` files the user approved.

Files are written whole (a temporary file renamed over the old one) with mode 600, in a folder made 700.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from ..kit.private import FILE_MODE, private_folder

CONFIG_DIR_VARIABLE = "CODER_AGENT_CONFIG_DIR"
CONFIG_FILE = "config.toml"
CREDENTIALS_FILE = "credentials.toml"
RULES_FILE = "rules.toml"
MCP_FILE = "mcp.json"
TRUST_FILE = "trusted-projects.toml"


def xdg_folder(environ: Mapping[str, str], variable: str, fallback: str) -> Path:
    """An XDG base folder: the variable when it holds an absolute path (the spec ignores others), else the default."""
    value = environ.get(variable, "")
    if os.path.isabs(value):
        return Path(value)
    return Path(environ.get("HOME") or Path.home()) / fallback


def config_dir(environ: Mapping[str, str]) -> Path:
    """The user's config folder: `$CODER_AGENT_CONFIG_DIR`, else `$XDG_CONFIG_HOME/coder-agent`."""
    value = environ.get(CONFIG_DIR_VARIABLE, "").strip()
    if value:
        return Path(value).expanduser()
    return xdg_folder(environ, "XDG_CONFIG_HOME", ".config") / "coder-agent"


def write_private(path: Path, text: str) -> None:
    """Replace `path` with `text`: a 600 file in a 700 folder, never half-written (renamed into place)."""
    private_folder(path.parent)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, FILE_MODE)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def append_private(path: Path, text: str, header: str = "") -> None:
    """Append `text` to `path` (created 600 in a 700 folder, starting with `header`), in one write."""
    private_folder(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, FILE_MODE)
    try:
        data = text if os.fstat(fd).st_size else header + text
        os.write(fd, data.encode("utf-8"))
    finally:
        os.close(fd)


def toml_string(value: str) -> str:
    """`value` as a TOML basic string (quotes, backslashes and control characters escaped)."""
    out = ['"']
    for char in value:
        code = ord(char)
        if char == '"':
            out.append('\\"')
        elif char == "\\":
            out.append("\\\\")
        elif char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif code < 0x20 or code == 0x7F or 0xD800 <= code <= 0xDFFF:
            out.append(f"\\u{code if code < 0xD800 else 0xFFFD:04X}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def toml_key(key: str) -> str:
    """A TOML key: bare when it can be, quoted otherwise."""
    if key and all(char.isascii() and (char.isalnum() or char in "-_") for char in key):
        return key
    return toml_string(key)


def toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} as TOML")


def set_top_level(text: str, values: Mapping[str, object], remove: tuple[str, ...] = ()) -> str:
    """`text` (a TOML document) with top-level `key = value` lines set: replaced where they are, else added first;
    the keys in `remove` are taken out.

    Only simple one-line values are replaced; comments and other lines stay as they were.
    """
    lines = text.splitlines()
    remaining = dict(values)
    in_table = False
    for index, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("["):
            in_table = True
        if in_table or not stripped or stripped.startswith("#") or "=" not in stripped:
            continue
        key = stripped.split("=", 1)[0].strip().strip('"')
        if key in remaining:
            lines[index] = f"{toml_key(key)} = {toml_value(remaining.pop(key))}"
        elif key in remove:
            lines[index] = f"# {stripped}  (removed by coder-agent login)"
    added = [f"{toml_key(key)} = {toml_value(value)}" for key, value in remaining.items()]
    first_table = next((i for i, line in enumerate(lines) if line.strip().startswith("[")), len(lines))
    lines[first_table:first_table] = added
    return "\n".join(lines) + "\n"
