"""Whether a model takes images, as litellm's model map says, answered in about a millisecond. Stdlib only.

`initialize` is answered before anything heavy is imported (see `acp.early`), yet its `promptCapabilities.image`
depends on the configured model. Parsing litellm's 3 MB map takes ~100 ms and importing litellm seconds, so
this looks the model's entry up in the file itself: a memory-mapped search for the entry's key (`"name": {`
at the start of a line), then only that entry is parsed (~1 ms, ~4 ms for a model the map lacks).

The keys are tried as litellm's lookup does for the common cases: the whole model string
(`openrouter/anthropic/...`, `gemini/gemini-2.5-pro`), then the name after the provider prefix when the entry
belongs to that provider (`anthropic/claude-sonnet-4-5` -> `claude-sonnet-4-5`); a bare name must be an
OpenAI or Anthropic model. A model it does not find takes no images: litellm says the same of models it does
not know. `tests/llm/test_vision.py` compares the answers with litellm's for the map's chat models.
"""

from __future__ import annotations

import json
import mmap
import os
import sys
from functools import cache
from typing import Any

FILE_NAME = "model_prices_and_context_window_backup.json"
_MAX_ENTRY = 64 * 1024


@cache
def map_path() -> str | None:
    """litellm's bundled map, found on `sys.path` without importing anything."""
    for folder in sys.path:
        path = os.path.join(folder or ".", "litellm", FILE_NAME)
        if os.path.isfile(path):
            return path
    return None


def _at_line_start(data: mmap.mmap, position: int) -> bool:
    return not data[data.rfind(b"\n", 0, position) + 1 : position].strip(b" \t")


def _entries(data: mmap.mmap, keys: list[str]) -> dict[str, dict[str, Any]]:
    """The top-level entries named `keys` (each ends with the shortest), found in one pass over the map; it
    stops once the first key, the one preferred, is found.

    An entry is `"key": {` with nothing but indentation before it on its line (the map's own formatting).
    """
    name = min(keys, key=len)
    literals = {key: json.dumps(key).encode() for key in keys}
    tail = literals[name][1:] + b": {"  # what every key's line has from the end of the opening quote on
    found: dict[str, dict[str, Any]] = {}
    hit = data.find(tail)
    while hit >= 0 and keys[0] not in found:
        end = hit + len(literals[name]) - 1  # where each key's literal ends
        for key, literal in literals.items():
            start = end - len(literal)
            if key not in found and start >= 0 and data[start:end] == literal and _at_line_start(data, start):
                text = data[end + 2 : end + 2 + _MAX_ENTRY].decode("utf-8", "replace")
                try:
                    entry, _ = json.JSONDecoder().raw_decode(text)
                except ValueError:
                    continue
                if isinstance(entry, dict):
                    found[key] = entry
        hit = data.find(tail, hit + 1)
    return found


def _candidates(model: str) -> list[tuple[str, tuple[str, ...] | None]]:
    """(key, the providers its entry must belong to, if any), in the order litellm would find them."""
    prefix, slash, name = model.partition("/")
    if not slash:  # litellm finds a bare name in its OpenAI and Anthropic model lists only
        return [(model, ("openai", "text-completion-openai", "anthropic"))]
    return [(model, None), (name, (prefix, f"text-completion-{prefix}"))]


def sees_images(model: str | None, path: str | None = None) -> bool:
    """Whether litellm's map says `model` takes images (`supports_vision`); False when it cannot say."""
    path = path or map_path()
    if not model or path is None:
        return False
    candidates = _candidates(model)
    try:
        with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            entries = _entries(data, [key for key, _ in candidates])
    except (OSError, ValueError):
        return False
    for key, owners in candidates:
        entry = entries.get(key)
        if entry is not None and (owners is None or entry.get("litellm_provider") in owners):
            return entry.get("supports_vision") is True
    return False
