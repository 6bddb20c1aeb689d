"""Every secret the agent knows, and masking them in what it writes or shows. Stdlib only: the early stages use it.

What the agent knows as secrets (`learn`, `learn_url`, `learn_environ`):

- the value of every credential variable it has, wherever it found it (the environment, the user's `.env`
  files, the keys `coder-agent login` saved, `config.toml`): `CODER_AGENT_API_KEY`, `CODER_AGENT_SERVE_TOKEN`,
  the provider key variables (`credentials.PROVIDER_KEY_VARIABLES`), and any other variable whose name says it
  holds one (`GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY`, `PGPASSWORD`: `_SECRET_NAME_ENDS`), and every model's key;
- what a URL among them carries (`CODER_AGENT_API_BASE`, `HTTPS_PROXY`, `DATABASE_URL`, ...): the password of
  its user info, and the values of query parameters named like keys (`key=`, `api_key=`, `token=`, `sig=`...).

Each becomes `[secret NAME]`, NAME being the variable it came from: the one hint that helps (which key to
rotate, which setting to fix) without a single character of the key, since a shown prefix or suffix narrows
the key and is itself what secret scanners flag. It is ASCII without any character JSON escapes, so it can
be put in place inside encoded JSON lines and bytes without encoding them again. In a URL only the secret
part is masked: `https://user:[secret CODER_AGENT_API_BASE]@host/v1?key=[secret CODER_AGENT_API_BASE]`.

A bare value shorter than `MIN_SECRET_LENGTH` (8), or without a letter, is not masked: the placeholders local
servers take ("ollama", "no-key", "sk-test", "none") are no secrets, and masking them would mangle ordinary
text; no real provider key is that short (the shortest are 32). Digits alone could be a number in a JSON line,
which a mask would break. A URL's short password or key is still masked where it stands in its URL
(`//user:pw@`, `key=pw`): that context makes the match specific.

The sinks call `mask` / `mask_bytes` (the JSON-RPC writer, the early writer, the session store, log records,
the CLI's output, tool results the model reads, model errors). There is one set per process, because the
secrets are the process's (like `os.environ`, where most come from) and every sink must see the same set:
the early writer and third-party loggers exist before any settings are read. It only grows: a key removed
by `coder-agent logout` is still masked.

Masking looks for every known form in one regular-expression pass and replaces only what it found: the line
of a streamed chunk pays ~0.5 us with five keys known, ~2.5 us with ten unlike ones. A secret split across two
writes (two streamed chunks) is not seen by either: the model never reads a known secret (tool results are
masked), so it cannot send one back that way.
"""

from __future__ import annotations

import json
import os
import re
import sys
from _thread import RLock  # `threading`'s own lock, without importing `threading` on the path to `initialize`
from collections.abc import Mapping
from types import TracebackType
from typing import IO, Any, TextIO, cast

from .credentials import API_KEY_VARIABLE, PREFIX, PROVIDER_KEY_VARIABLES

MIN_SECRET_LENGTH = 8
SERVE_TOKEN_VARIABLE = PREFIX + "SERVE_TOKEN"
API_BASE_VARIABLE = PREFIX + "API_BASE"
MODEL_KEY = "model key"  # a model's key not known under any variable's name (a `ModelConfig` made in code)
MASK_START = "[secret "
_GENERIC = f"{MASK_START}{MODEL_KEY}]"

# A variable whose name ends so holds a secret (the agent's settings end so too: API_KEY, SERVE_TOKEN). Plain
# suffixes, not a pattern: the environment is first looked at on the path to `initialize`, where a compile costs.
_SECRET_NAME_ENDS = (
    *("TOKEN", "SECRET", "SECRETS", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "CREDENTIALS"),
    *(f"{kind}{joint}KEY" for kind in ("API", "ACCESS", "SECRET", "PRIVATE") for joint in ("", "_")),
)  # not ..._TOKENS: a count (MAX_TOKENS)
# A URL query parameter whose name holds one of these words carries a secret.
_KEY_PARAM_WORDS = ("key", "token", "secret", "pass", "pwd", "sig", "auth", "credential")


def mask(text: str) -> str:
    """`text` with every known secret masked."""
    known = _known or _first_look()
    if known.empty or known.text.search(text) is None:
        return text
    return known.text.sub(known.text_mask, text)


def mask_bytes(data: bytes) -> bytes:
    """`data` (UTF-8) with every known secret masked."""
    known = _known or _first_look()
    if known.empty or known.data.search(data) is None:
        return data
    return known.data.sub(known.data_mask, data)


def replaced_by_masks(old: str, new: str) -> list[str]:
    """The masks that stand in `new` where `old` holds the secrets they mask, which `new` no longer holds: text
    written from a masked copy (what the model read) that would put masks in place of the keys."""
    known = _known or _first_look()
    if known.empty:
        return []
    lost = {
        shown
        for found in known.text.finditer(old)
        if found.group() not in new and new.count(shown := known.text_mask(found)) > old.count(shown)
    }
    return sorted(lost)


def label(name: str) -> str:
    return f"{MASK_START}{name}]"


def is_secret_variable(name: str) -> bool:
    """Whether the variable `name` holds a credential (its value is a secret, whatever it looks like)."""
    return name in PROVIDER_KEY_VARIABLES or name == API_KEY_VARIABLE or name.upper().endswith(_SECRET_NAME_ENDS)


def learn(name: str, value: str | None) -> None:
    """`value` is a secret, known as `name` (the variable it came from)."""
    if value:
        with _lock:
            _ensure_environ()
            if _add_value(name, value):
                _publish()


def learn_url(name: str, url: str | None) -> None:
    """The secrets in the URL `url` (its password, its key-like query values), known as `name`."""
    if url:
        with _lock:
            _ensure_environ()
            if _add_url(name, url):
                _publish()


def learn_environ(environ: Mapping[str, str]) -> None:
    """Every secret in `environ`: the credential variables' values and the secrets of the URLs in it."""
    with _lock:
        _ensure_environ()
        if _add_environ(environ):
            _publish()


# ---- the set of secrets ---------------------------------------------------------------------------------------


class _Known:
    """Every form to look for, as one pattern (one pass over a line, however many secrets: ~0.5 us for a streamed
    chunk's line with 5 keys, ~2.5 us with 10 unlike ones, where an `in` per form costs ~0.4 us each), and their
    masks. Longest first: where a secret starts inside a longer one's form, the longer one wins. Each pattern is
    compiled when first used (the early writer uses the bytes one alone)."""

    __slots__ = ("_data", "_data_re", "_text", "_text_re", "empty")

    def __init__(self, forms: Mapping[str, str]) -> None:
        self._text = dict(forms)
        self._data = {needle.encode(): shown.encode() for needle, shown in forms.items()}
        self._text_re: re.Pattern[str] | None = None
        self._data_re: re.Pattern[bytes] | None = None
        self.empty = not forms

    @property
    def text(self) -> re.Pattern[str]:
        if self._text_re is None:
            self._text_re = re.compile("|".join(map(re.escape, sorted(self._text, key=len, reverse=True))))
        return self._text_re

    @property
    def data(self) -> re.Pattern[bytes]:
        if self._data_re is None:
            self._data_re = re.compile(b"|".join(map(re.escape, sorted(self._data, key=len, reverse=True))))
        return self._data_re

    def text_mask(self, found: re.Match[str]) -> str:
        return self._text[found.group()]

    def data_mask(self, found: re.Match[bytes]) -> bytes:
        return self._data[found.group()]


_lock = RLock()
_forms: dict[str, str] = {}  # a form a secret may be written in -> its mask
_known: _Known | None = None  # None until the process's environment was looked at
_environ_seen = False


def _first_look() -> _Known:
    """The process's own environment, looked at the first time anything is masked (not at import: stdlib only,
    and the path to `initialize` pays for nothing it does not write)."""
    with _lock:
        _ensure_environ()
        if _known is None:
            _publish()
    assert _known is not None
    return _known


def _ensure_environ() -> None:
    global _environ_seen
    if not _environ_seen:
        _environ_seen = True
        _add_environ(os.environ)


def _publish() -> None:
    global _known
    _known = _Known(_forms)  # one assignment: a sink masks with the old set or the new one, never half of one


def _add_environ(environ: Mapping[str, str]) -> bool:
    added = False
    for name, value in list(environ.items()):
        if is_secret_variable(name) and not value.lstrip().startswith(("/", "~", "./")):  # not a file's path
            added = _add_value(name, value) or added
        if "://" in value:
            added = _add_url(name, value) or added
    return added


def _add_form(form: str, shown: str) -> bool:
    """Mask `form`, and the forms JSON writes it in (escaped, ASCII-only), as `shown`. The first name a secret
    was known by stays, but a variable's name replaces the generic `MODEL_KEY` (a model made before the settings
    named its key)."""
    added = False
    for variant in {form, json.dumps(form)[1:-1], json.dumps(form, ensure_ascii=False)[1:-1]}:
        if _forms.get(variant) in (None, _GENERIC) and _forms.get(variant) != shown:
            _forms[variant] = shown
            added = True
    return added


def _add_value(name: str, value: str) -> bool:
    value = value.strip()
    if len(value) < MIN_SECRET_LENGTH or not any(c.isalpha() for c in value):
        # Digits alone are no key (a port, a count); in a JSON line they could be a number, and the mask there
        # would break the line.
        return False
    return _add_form(value, label(name))


def _add_url(name: str, url: str) -> bool:
    parts = _url_parts(url.strip())
    if parts is None:
        return False
    userinfo, query = parts
    added = False
    shown = label(name)
    user, colon, password = userinfo.partition(":")
    if colon and password:
        context = f"//{userinfo}@"
        if len(context) >= MIN_SECRET_LENGTH:
            added = _add_form(context, f"//{user}:{shown}@") or added
        for value in {password, _unquote(password)}:
            added = _add_value(name, value) or added
        import binascii  # the same as a Basic Authorization header carries it, should a server echo that

        basic = binascii.b2a_base64(f"{_unquote(user)}:{_unquote(password)}".encode(), newline=False).decode()
        added = _add_value(name, basic) or added
    for pair in query.split("&"):
        key, equals, value = pair.partition("=")
        if equals and value and any(word in key.lower() for word in _KEY_PARAM_WORDS):
            if len(pair) >= MIN_SECRET_LENGTH:
                added = _add_form(pair, f"{key}={shown}") or added
            for form in {value, _unquote(value)}:
                added = _add_value(name, form) or added
    return added


def _url_parts(url: str) -> tuple[str, str] | None:
    """(the user info, the query) of `url`, as `urllib.parse.urlsplit` finds them; None for no URL. By hand:
    `urllib.parse` imports `ipaddress`, 2-10 ms on a busy machine, and the environment is first looked at on the
    path to `initialize`."""
    scheme, separator, rest = url.partition("://")
    if not separator or not scheme or not all(c.isalnum() or c in "+-." for c in scheme):
        return None
    end = min((at for at in map(rest.find, "/?#") if at >= 0), default=len(rest))
    userinfo = rest[:end].rpartition("@")[0]
    query = rest[end:].partition("#")[0].partition("?")[2]
    return userinfo, query


def _unquote(text: str) -> str:
    if "%" not in text:
        return text
    from urllib.parse import unquote  # only for a URL that percent-encodes its secret

    return unquote(text)


# ---- the CLI's own output -------------------------------------------------------------------------------------


class _MaskedBinary:
    """A binary stream whose writes are masked (`sys.stdout.buffer` of a masked stdout)."""

    def __init__(self, inner: IO[bytes]) -> None:
        self._inner = inner

    def write(self, data: bytes) -> int:
        self._inner.write(mask_bytes(bytes(data)))
        return len(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class MaskedText:
    """A text stream whose writes are masked; everything else is the stream's own (`isatty`, `fileno`, ...)."""

    def __init__(self, inner: TextIO) -> None:
        self._inner = inner

    @property
    def inner(self) -> TextIO:
        return self._inner

    def write(self, text: str) -> int:
        self._inner.write(mask(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    @property
    def buffer(self) -> _MaskedBinary:
        return _MaskedBinary(self._inner.buffer)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def masked(stream: TextIO) -> TextIO:
    return stream if isinstance(stream, MaskedText) else cast(TextIO, MaskedText(stream))


class masked_stdio:  # lower case: used as a `with` statement, like a function made a context manager
    """`sys.stdout` and `sys.stderr` masked while a command runs (its output, a library's print, a traceback)."""

    def __enter__(self) -> None:
        self._saved = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = masked(sys.stdout), masked(sys.stderr)

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        sys.stdout, sys.stderr = self._saved
