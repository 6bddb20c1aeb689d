"""The projects' `.mcp.json` files the user approved (or refused), kept in the user's config folder.

A project's `.mcp.json` starts processes, so it is used only after the user said yes to it. The answer is kept
in `trusted-projects.toml` in the config folder (never in the project), keyed by the file's path and the
sha256 of its content: a file that changes is asked about again.

    [[project]]
    file = "/home/me/src/app/.mcp.json"
    sha256 = "9f86d0..."
    decision = "allow"   # or "reject": never asked again for this content
"""

from __future__ import annotations

import logging
import tomllib
from pathlib import Path
from typing import Literal

from ..config.userfiles import TRUST_FILE, toml_string, write_private

log = logging.getLogger(__name__)

Decision = Literal["allow", "reject"]
HEADER = (
    "# The projects' .mcp.json files you approved or refused, by path and content (sha256).\n"
    "# A file whose content changes is asked about again. Remove an entry to be asked again.\n"
)


class ProjectTrust:
    def __init__(self, folder: Path) -> None:
        self.path = folder / TRUST_FILE

    def _entries(self) -> list[dict[str, str]]:
        try:
            document = tomllib.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            log.warning("ignoring %s (every project's .mcp.json will be asked about): %s", self.path, exc)
            return []
        entries = document.get("project", [])
        if not isinstance(entries, list):
            return []
        return [
            {key: str(value) for key, value in entry.items() if isinstance(value, str)}
            for entry in entries
            if isinstance(entry, dict)
        ]

    def decision(self, file: Path, digest: str) -> Decision | None:
        for entry in self._entries():
            if entry.get("file") == str(file) and entry.get("sha256") == digest:
                found = entry.get("decision")
                if found == "allow":
                    return "allow"
                if found == "reject":
                    return "reject"
        return None

    def record(self, file: Path, digest: str, decision: Decision) -> None:
        """Keep the user's answer for this content of `file` (any answer for its other contents is dropped)."""
        kept = [entry for entry in self._entries() if entry.get("file") != str(file)]
        kept.append({"file": str(file), "sha256": digest, "decision": decision})
        blocks = [
            "\n".join(["[[project]]", *(f"{key} = {toml_string(value)}" for key, value in entry.items())])
            for entry in kept
        ]
        write_private(self.path, HEADER + "\n" + "\n\n".join(blocks) + "\n")
