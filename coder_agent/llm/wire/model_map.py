"""litellm's model map (prices, context windows, abilities), read without importing litellm. Stdlib only.

litellm ships the map as JSON (`model_prices_and_context_window_backup.json`) and, with
`LITELLM_LOCAL_MODEL_COST_MAP=True`, uses exactly that file. This is the one reader of it: `read_all` parses the
whole file (~30-50 ms: the runtime's price map, in a worker thread), `find` only the entries it is asked for
(~1-2 ms: what the early stage needs, whether the configured model takes images and what its first call costs).
"""

from __future__ import annotations

import json
import mmap
import os
import sys
from collections.abc import Iterable
from functools import cache
from typing import Any

FILE_NAME = "model_prices_and_context_window_backup.json"
_MAX_ENTRY = 64 * 1024  # no entry is near this long; a longer one is not read by `find`


@cache
def map_path() -> str | None:
    """The map litellm would use, found without importing it: on `sys.path` as a plain package usually is, else
    where the import system says the package lives (an editable or namespace install)."""
    for folder in sys.path:
        path = os.path.join(folder or ".", "litellm", FILE_NAME)
        if os.path.isfile(path):
            return path
    import importlib.util  # here: a millisecond the first answers do not pay when the plain search finds it

    spec = importlib.util.find_spec("litellm")
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        path = os.path.join(folder, FILE_NAME)
        if os.path.isfile(path):
            return path
    return None


def read_all() -> dict[str, Any]:
    """The whole map (blocking, ~30-50 ms: never on the event loop). Raises `OSError` or `ValueError`."""
    path = map_path()
    if path is None:
        raise FileNotFoundError("litellm is not installed")
    with open(path, "rb") as handle:
        entries: dict[str, Any] = json.loads(handle.read())
    return entries


def find(keys: Iterable[str], path: str | None = None) -> dict[str, Any] | None:
    """The entries named `keys` (those the map has), each exactly as `read_all` gives it, without parsing the whole
    file. None when unsure (no map, or a name the file could spell otherwise): the caller reads it all.

    litellm writes the file with `json.dumps(indent=4)`: an entry starts a line `    "<name>": {`. A name that is
    a key anywhere else too (a nested key, or a second entry, which would win in `json.loads`), or a file with
    `\\u` escapes (which could spell a name differently), is not read this way. `path`: another file (for tests).
    `tests/llm/test_price_map.py` and `tests/llm/test_vision.py` check the answers against the whole map and
    against litellm.
    """
    path = path or map_path()
    if path is None:
        return None
    try:
        with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            return _find(path, data, keys)
    except (OSError, ValueError):
        return None


_escapes: dict[tuple[str, int, int], bool] = {}  # (path, size, mtime) -> whether the file holds a `\u` escape


def _has_escapes(path: str, data: mmap.mmap) -> bool:
    """One scan of the file per process (each is a few milliseconds: the early stage asks twice)."""
    info = os.stat(path)
    key = (path, info.st_size, info.st_mtime_ns)
    if key not in _escapes:
        _escapes[key] = data.find(b"\\u") >= 0
    return _escapes[key]


def _find(path: str, data: mmap.mmap, keys: Iterable[str]) -> dict[str, Any] | None:
    if _has_escapes(path, data):
        return None
    decoder = json.JSONDecoder()
    found: dict[str, Any] = {}
    for key in keys:
        named = json.dumps(key).encode() + b": "  # the name as a key: no value is followed by ": "
        at = data.find(named)
        if at < 0:
            continue
        start = at + len(named)
        # Its entry only on a line of its own, as litellm writes it, and the name as a key nowhere after it (another
        # entry of that name would win): else unsure. Both searches go forward: together, one pass over the file.
        if data[at - 5 : at] != b"\n    " or data.find(named, start) >= 0:
            return None
        text = data[start : start + _MAX_ENTRY].decode("utf-8", "replace")
        try:
            found[key] = decoder.raw_decode(text)[0]
        except ValueError:
            return None
    return found
