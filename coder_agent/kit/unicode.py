"""Text that is not valid Unicode: finding it in what arrives, and keeping it out of what leaves. Stdlib only.

JSON can carry a lone surrogate (`"\\ud800"`), and a peer can send bytes that are not UTF-8; Python decodes
both into `str`s that cannot be encoded back. Incoming requests with such text are refused where they
arrive; anything we write is scrubbed (each surrogate becomes U+FFFD) so one bad string never costs a line.
"""

from __future__ import annotations

import json
import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")
# In raw JSON bytes: an escape that decodes to a surrogate. Pairs are fine and common (emoji), so this is
# only the cue to look closer.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")

INVALID_UNICODE = "invalid Unicode (a lone surrogate, or bytes that are not UTF-8)"


def decode_line(line: bytes) -> tuple[str, bool]:
    """The line as text, and whether it may hold invalid Unicode (then check its strings with `find_invalid`)."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return line.decode("utf-8", "surrogateescape"), True
    return text, _SURROGATE_ESCAPE.search(line) is not None


def is_valid(text: str) -> bool:
    return text.isascii() or _SURROGATE.search(text) is None


def find_invalid(value: Any, where: str = "params") -> str | None:
    """Where in `value` (a parsed JSON value) the first string with invalid Unicode is, e.g. `params.prompt[0].text`."""
    if isinstance(value, str):
        return None if is_valid(value) else where
    if isinstance(value, dict):
        for key, item in value.items():
            if not is_valid(key):
                return f"{where} (a key)"
            found = find_invalid(item, f"{where}.{key}")
            if found is not None:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = find_invalid(item, f"{where}[{index}]")
            if found is not None:
                return found
    return None


def scrub(text: str) -> str:
    """`text` with each surrogate replaced by U+FFFD."""
    return text if is_valid(text) else _SURROGATE.sub("\ufffd", text)


def scrub_value(value: Any) -> Any:
    """A parsed JSON value with every string scrubbed."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {scrub(key): scrub_value(item) for key, item in value.items()}
    if isinstance(value, list):
        return [scrub_value(item) for item in value]
    return value


def dumps(value: Any) -> bytes:
    """Compact UTF-8 JSON, whatever strings `value` holds."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode()
    except UnicodeEncodeError:
        return scrub(text).encode()
