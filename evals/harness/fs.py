"""`fs/read_text_file` and `fs/write_text_file` as the editor profile serves them: confined to the workspace.

A path outside the trial's workspace (after resolving symlinks and `..`) is refused with -32002, as a file
the editor does not have; so is a file that does not exist. Inside it, the files are read and written as the
agent's own local client does (`coder_agent.local.files`): pages of lines, texts with their line endings.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio

from coder_agent.acp.errors import RESOURCE_NOT_FOUND, RequestError
from coder_agent.acp.schema import ReadTextFileRequest, WriteTextFileRequest
from coder_agent.local.files import LocalFiles


def confine(root: Path, path: str) -> Path:
    """`path` if it is absolute and inside `root`; else a -32002 (or -32602 for a relative path)."""
    if not os.path.isabs(path):
        raise RequestError.invalid_params(f"Invalid params: path must be absolute, got {path!r}")
    real = os.path.realpath(path)
    real_root = os.path.realpath(root)
    if real != real_root and not real.startswith(real_root.rstrip(os.sep) + os.sep):
        raise RequestError(RESOURCE_NOT_FOUND, f"{path} is outside the workspace", {"path": path})
    return Path(real)


class FileService:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.reads = 0
        self.writes = 0
        self.refused: list[str] = []  # paths outside the workspace the agent asked for
        self._files = LocalFiles()

    def _confine(self, path: str) -> Path:
        try:
            return confine(self.root, path)
        except RequestError:
            self.refused.append(path)
            raise

    async def read_text_file(self, params: Any) -> dict[str, Any]:
        request = ReadTextFileRequest.model_validate(params)
        target = self._confine(request.path)
        try:
            text = await self._files.read_text_file(request.session_id, str(target), request.line, request.limit)
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as exc:
            raise RequestError(RESOURCE_NOT_FOUND, f"{request.path}: {exc.strerror}", {"path": request.path}) from exc
        self.reads += 1
        return {"content": text}

    async def write_text_file(self, params: Any) -> dict[str, Any]:
        request = WriteTextFileRequest.model_validate(params)
        target = self._confine(request.path)
        if await anyio.Path(target).is_dir():
            raise RequestError.invalid_params(f"Invalid params: {request.path} is a directory")
        await self._files.write_text_file(request.session_id, str(target), request.content)
        self.writes += 1
        return {}
