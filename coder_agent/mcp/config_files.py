"""MCP servers named in files: the user's `mcp.json`, `--mcp-config FILE`, a project's `.mcp.json`.

The format is the common `.mcp.json` one:

    {"mcpServers": {
        "github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"X": "y"}},
        "docs": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ..."}},
        "old": {"type": "sse", "url": "http://127.0.0.1:9000/sse"}
    }}

An entry with `"disabled": true` is left out; an entry that cannot be used is left out and reported (the others
still work). Does not import the mcp SDK.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..acp.schema import EnvVariable, McpServer, McpServerHttp, McpServerSse, McpServerStdio
from ..acp.schema.session import HttpHeader
from ..kit.untrusted import Refused, read_capped

MAX_FILE_BYTES = 1024 * 1024
HTTP_TYPES = ("http", "streamable-http", "streamable_http", "streamableHttp")


class McpConfigError(Exception):
    """A file that cannot be read as an MCP config at all; the message names it and says why."""


@dataclass
class McpFile:
    path: Path
    servers: list[McpServer] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # entries left out, and why
    digest: str = ""  # sha256 of the file's bytes: an approval is for this content only


def _strings(value: Any, what: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"{what} must be a list of strings")
    return list(value)


def _pairs(value: Any, what: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(v, str) for v in value.values()):
        raise ValueError(f"{what} must be an object of strings")
    return {str(k): v for k, v in value.items()}


def server_from(name: str, entry: Any) -> McpServer | None:
    """One entry as an ACP `McpServer` (None when disabled); `ValueError` says what is wrong with it."""
    if not isinstance(entry, Mapping):
        raise ValueError("must be an object")
    if entry.get("disabled") is True:
        return None
    kind = entry.get("type")
    if isinstance(entry.get("command"), str) and kind in (None, "stdio"):
        command = entry["command"].strip()
        if not command:
            raise ValueError("command is empty")
        env = [EnvVariable(name=k, value=v) for k, v in _pairs(entry.get("env"), "env").items()]
        return McpServerStdio(name=name, command=command, args=_strings(entry.get("args"), "args"), env=env)
    url = entry.get("url")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise ValueError("needs a command, or an http(s) url")
    headers = [HttpHeader(name=k, value=v) for k, v in _pairs(entry.get("headers"), "headers").items()]
    if kind == "sse":
        return McpServerSse(type="sse", name=name, url=url, headers=headers)
    if kind is None or kind in HTTP_TYPES:
        return McpServerHttp(type="http", name=name, url=url, headers=headers)
    raise ValueError(f"unknown type {kind!r} (stdio, http or sse)")


def parse(path: Path, data: bytes) -> McpFile:
    result = McpFile(path, digest=hashlib.sha256(data).hexdigest())
    try:
        document = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise McpConfigError(f"{path} is not valid JSON: {exc}") from None
    servers = document.get("mcpServers") if isinstance(document, dict) else None
    if not isinstance(servers, dict):
        raise McpConfigError(f'{path} has no "mcpServers" object')
    for name, entry in servers.items():
        if not name.strip():
            result.problems.append(f"{path}: a server with an empty name is left out")
            continue
        try:
            server = server_from(name, entry)
        except ValueError as exc:
            result.problems.append(f"{path}: server {name!r} is left out: {exc}")
            continue
        if server is not None:
            result.servers.append(server)
    return result


def read(path: Path, roots: Sequence[str] | None = None) -> McpFile | None:
    """The servers `path` names; None when there is no such file; `McpConfigError` when it is unusable.

    With `roots` (a project's file: the project decides what its path is) only a regular file inside them, once
    links are followed, is read: a link outside, a pipe or a device is refused unread. The user's own files
    (`roots` None) may be anything they name."""
    if roots is not None:
        return _read_untrusted(path, roots)
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise McpConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_FILE_BYTES:
        raise McpConfigError(f"{path} is larger than {MAX_FILE_BYTES} bytes")
    return parse(path, data)


def _read_untrusted(path: Path, roots: Sequence[str]) -> McpFile | None:
    try:
        got = read_capped(str(path), MAX_FILE_BYTES, roots)
    except Refused as exc:
        raise McpConfigError(f"{path} was not read: {exc.reason}") from None
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise McpConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    if got.cut:
        raise McpConfigError(f"{path} is larger than {MAX_FILE_BYTES} bytes ({got.size:,})")
    return parse(path, got.data)


def describe(server: McpServer) -> str:
    """What a server runs or where it connects, for the user to judge (header values are not shown)."""
    if isinstance(server, McpServerStdio):
        return " ".join([server.command, *server.args])
    return f"{server.url} ({server.type})"
