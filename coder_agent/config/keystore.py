"""The keys `coder-agent login` saves: `credentials.toml` in the user's config folder, or the OS keyring.

The file is the user's alone (600, in a 700 folder) and names each key by the variable it stands for:

    [keys]
    ANTHROPIC_API_KEY = "sk-ant-..."

    [keyring]   # keys kept in the OS keyring (service "coder-agent"), by name
    names = ["OPENAI_API_KEY"]

Only the agent's own variables are taken (`CODER_AGENT_API_KEY` and the provider key variables), so that
`credentials.child_environment` keeps every saved key from commands and MCP servers. The keyring is used only
when the `keyring` package is importable and has a working backend. Values are never logged. Standard library
only (the keyring package, when used, is imported on demand).
"""

from __future__ import annotations

import importlib
import logging
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from ..kit.credentials import is_agent_variable
from .userfiles import CREDENTIALS_FILE, toml_key, toml_string, toml_value, write_private

log = logging.getLogger(__name__)

KEYRING_SERVICE = "coder-agent"
HEADER = (
    "# Keys saved by `coder-agent login`. Only you can read this file (mode 600).\n"
    "# `coder-agent logout` removes them; the variables named here are never passed to commands or MCP servers.\n"
)
Where = Literal["auto", "file", "keyring"]


class Keyring(Protocol):
    """What we use of the `keyring` package."""

    def get_password(self, service_name: str, username: str) -> str | None: ...

    def set_password(self, service_name: str, username: str, password: str) -> None: ...

    def delete_password(self, service_name: str, username: str) -> None: ...


def system_keyring() -> Keyring | None:
    """The OS keyring, when the `keyring` package is installed and one of its real backends works."""
    try:
        module: Any = importlib.import_module("keyring")
        backend = module.get_keyring()
    except Exception:  # not installed, or no usable backend: the file is used
        return None
    kind = f"{type(backend).__module__}.{type(backend).__name__}".lower()
    if float(getattr(backend, "priority", 0) or 0) <= 0 or "fail" in kind or "null" in kind:
        return None
    keyring: Keyring = module
    return keyring


NO_KEYRING = "no OS keyring is available (install the `keyring` package and a backend)"


class KeyringFailed(ValueError):
    """The key could not go to the OS keyring (there is none, or it refused); nothing was saved."""


@dataclass
class SavedKeys:
    keys: dict[str, str] = field(default_factory=dict)  # variable -> key
    problems: list[str] = field(default_factory=list)  # what could not be read (never a value)


class KeyStore:
    def __init__(self, folder: Path, keyring: Keyring | None = None) -> None:
        self.path = folder / CREDENTIALS_FILE
        self._keyring = keyring

    def _read(self) -> tuple[dict[str, str], list[str]]:
        """(keys in the file, names kept in the keyring); an unreadable file raises `ValueError`."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}, []
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"cannot read {self.path}: {exc}") from None
        try:
            document = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"{self.path} is not valid TOML: {exc}") from None
        table = document.get("keys", {})
        keys = {k: v for k, v in table.items() if isinstance(v, str) and v.strip()} if isinstance(table, dict) else {}
        names = document.get("keyring", {}).get("names", []) if isinstance(document.get("keyring"), dict) else []
        return keys, [name for name in names if isinstance(name, str)]

    def load(self) -> SavedKeys:
        saved = SavedKeys()
        try:
            keys, keyring_names = self._read()
        except ValueError as exc:
            saved.problems.append(str(exc))
            return saved
        for name, key in keys.items():
            if is_agent_variable(name):
                saved.keys[name] = key.strip()
            else:
                saved.problems.append(f"{self.path}: {name} is not a key variable of the agent's; ignored")
        for name in keyring_names:
            if not is_agent_variable(name) or name in saved.keys:
                continue
            value = self._from_keyring(name, saved.problems)
            if value:
                saved.keys[name] = value
        return saved

    def _from_keyring(self, name: str, problems: list[str]) -> str | None:
        keyring = self._keyring or system_keyring()
        if keyring is None:
            problems.append(f"{name} is saved in the OS keyring, which is not available now")
            return None
        try:
            return keyring.get_password(KEYRING_SERVICE, name)
        except Exception as exc:
            problems.append(f"{name} could not be read from the OS keyring: {type(exc).__name__}")
            return None

    def names(self) -> list[str]:
        """The variables saved (without reading the keyring's values)."""
        try:
            keys, keyring_names = self._read()
        except ValueError:
            return []
        return sorted({*keys, *keyring_names})

    def save(self, name: str, value: str, where: Where = "auto") -> str:
        """Save `value` as `name`; returns where it went (for the user). Replaces what was saved under `name`."""
        if not is_agent_variable(name):
            raise ValueError(f"{name} is not a key variable of the agent's")
        keys, keyring_names = self._read()
        keyring = self._keyring or (system_keyring() if where != "file" else None)
        if where == "keyring" and keyring is None:
            raise KeyringFailed(NO_KEYRING)
        keys.pop(name, None)
        keyring_names = [n for n in keyring_names if n != name]
        if keyring is not None:
            try:
                keyring.set_password(KEYRING_SERVICE, name, value)
            except Exception as exc:  # a locked or broken backend: said, by kind (never with the value)
                raise KeyringFailed(f"the OS keyring did not take the key: {type(exc).__name__}: {exc}") from None
            keyring_names.append(name)
            place = "the OS keyring"
        else:
            keys[name] = value
            place = str(self.path)
        self._write(keys, keyring_names)
        return place

    def remove(self, names: Iterable[str] | None = None) -> list[str]:
        """Forget the keys saved under `names` (all of them when None); the names that were saved."""
        keys, keyring_names = self._read()
        wanted = set(names) if names is not None else {*keys, *keyring_names}
        removed = sorted(wanted & {*keys, *keyring_names})
        for name in wanted & set(keyring_names):
            keyring = self._keyring or system_keyring()
            if keyring is None:
                log.warning("%s is in the OS keyring, which is not available: remove it there by hand", name)
                continue
            try:
                keyring.delete_password(KEYRING_SERVICE, name)
            except Exception as exc:
                log.warning("could not remove %s from the OS keyring: %s", name, type(exc).__name__)
        if removed:
            self._write(
                {k: v for k, v in keys.items() if k not in wanted}, [n for n in keyring_names if n not in wanted]
            )
        return removed

    def _write(self, keys: dict[str, str], keyring_names: list[str]) -> None:
        lines = [HEADER, "[keys]"]
        lines += [f"{toml_key(name)} = {toml_string(value)}" for name, value in sorted(keys.items())]
        if keyring_names:
            lines += ["", "[keyring]", f"names = {toml_value(sorted(set(keyring_names)))}"]
        write_private(self.path, "\n".join(lines) + "\n")
