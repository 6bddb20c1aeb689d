"""A Python regular expression, as `grep` takes it, written for ripgrep so that it matches exactly the same.

Python's own parser reads the pattern (so verbose mode, `\\N{...}`, `\\u....`, octal escapes and Python's class
syntax mean what Python says they mean), and the tree is written back in the syntax both of rg's engines read
alike: every character that is not an ASCII letter, digit, `_` or space as `\\x{HEX}` (Rust's regex reads `\\<` as a
word boundary, Python as `<`; Python reads `[[:alpha:]]` as a class of `[:alph` and a `]`), classes spelled out,
groups unnamed (numbered as Python numbers them). rg runs it with `--engine auto`: its default engine when the
pattern is within that engine's syntax (the fast path, with its literal prefilters), PCRE2 when it is not
(lookarounds, backreferences, possessive and atomic groups, conditionals, Python's ASCII flag as `(?a)`).

Python's parser is `re._parser`, a private module: it is the only complete reading of Python's syntax there is
(writing a second one by hand would drift from it). Anything in its tree we do not know raises `Untranslatable`,
and the search then runs on Python's `re` itself, so a change in a later Python costs speed, never results.

`grep` matches one line at a time: a pattern that must match a line break can never match, and says so
(`LineBreak`) instead of finding nothing.
"""

from __future__ import annotations

import importlib
import re
import warnings
from typing import Any

_parser: Any = importlib.import_module("re._parser")
_constants: Any = importlib.import_module("re._constants")

NEWLINE = 10


class Untranslatable(ValueError):
    """Something in the pattern's tree we do not write for rg: search with Python's `re` instead."""


class LineBreak(ValueError):
    """The pattern must match a line break, which a line never holds."""


def _char(code: int) -> str:
    if code < 128 and (chr(code).isalnum() or chr(code) in "_ "):
        return chr(code)
    return f"\\x{{{code:X}}}"


_CATEGORIES = {
    "CATEGORY_DIGIT": r"\d",
    "CATEGORY_NOT_DIGIT": r"\D",
    "CATEGORY_SPACE": r"\s",
    "CATEGORY_NOT_SPACE": r"\S",
    "CATEGORY_WORD": r"\w",
    "CATEGORY_NOT_WORD": r"\W",
}
_ANCHORS = {
    # One line at a time, as `grep` matches: the start and end of the string are the line's.
    "AT_BEGINNING": "^",
    "AT_BEGINNING_STRING": "^",
    "AT_END": "$",
    "AT_END_STRING": "$",
    "AT_BOUNDARY": r"\b",
    "AT_NON_BOUNDARY": r"\B",
}
_SINGLE = {"LITERAL", "NOT_LITERAL", "ANY", "IN", "GROUPREF"}  # what a quantifier can follow unwrapped


def _category(code: Any) -> str:
    try:
        return _CATEGORIES[str(code)]
    except KeyError:
        raise Untranslatable(f"category {code}") from None


def _flags(bits: int) -> str:
    letters = ""
    if bits & _constants.SRE_FLAG_IGNORECASE:
        letters += "i"
    if bits & _constants.SRE_FLAG_DOTALL:
        letters += "s"
    if bits & _constants.SRE_FLAG_ASCII:
        letters += "a"  # PCRE2's (?a): \d, \w, \s, \b and the POSIX classes ASCII only; Rust's regex has none
    return letters  # MULTILINE says nothing line by line; VERBOSE was applied by the parser


def _class(items: list[tuple[Any, Any]]) -> str:
    negate = bool(items) and str(items[0][0]) == "NEGATE"
    parts: list[str] = []
    for op, value in items[1:] if negate else items:
        name = str(op)
        if name == "LITERAL":
            if value == NEWLINE and not negate:
                continue  # a line holds no line break: the class's other members still match
            parts.append(_char(value))
        elif name == "RANGE":
            parts.append(f"{_char(value[0])}-{_char(value[1])}")
        elif name == "CATEGORY":
            parts.append(_category(value))
        else:
            raise Untranslatable(f"class member {name}")
    if not parts:
        raise LineBreak("the pattern's class holds only a line break")
    if not negate and len(items) == 1 and str(items[0][0]) == "CATEGORY":
        return parts[0]
    return "[" + ("^" if negate else "") + "".join(parts) + "]"


def _captures(value: Any) -> bool:
    """Whether a piece of the tree holds a numbered group (dropping it would renumber the ones after it)."""
    if isinstance(value, tuple) and len(value) == 2 and str(value[0]) == "SUBPATTERN" and value[1][0] is not None:
        return True
    if isinstance(value, (list, tuple)) or type(value).__name__ == "SubPattern":
        return any(_captures(part) for part in value)
    return False


def _unless_line_break(item: Any) -> str | None:
    """`item` written for rg, or None when it can only match a line break (and holds no numbered group)."""
    try:
        return _sequence(item)
    except LineBreak:
        if _captures(item):
            raise Untranslatable("a line break in a numbered group") from None
        return None


def _repeat(name: str, value: tuple[int, int, Any]) -> str:
    low, high, item = value
    if low == 0:  # `\n?`, `(?:\n|x)*`: it may match nothing, which a line allows
        written = _unless_line_break(item)
        if written is None:
            return ""
        body = written
    else:
        body = _sequence(item)
    if not (len(item) == 1 and (str(item[0][0]) in _SINGLE or _is_group(item[0]))):
        body = f"(?:{body})"
    if (low, high) == (0, _constants.MAXREPEAT):
        quantifier = "*"
    elif (low, high) == (1, _constants.MAXREPEAT):
        quantifier = "+"
    elif (low, high) == (0, 1):
        quantifier = "?"
    elif low == high:
        quantifier = f"{{{low}}}"
    elif high == _constants.MAXREPEAT:
        quantifier = f"{{{low},}}"
    else:
        quantifier = f"{{{low},{high}}}"
    return body + quantifier + {"MAX_REPEAT": "", "MIN_REPEAT": "?", "POSSESSIVE_REPEAT": "+"}[name]


def _is_group(node: tuple[Any, Any]) -> bool:
    return str(node[0]) in ("SUBPATTERN", "ATOMIC_GROUP", "ASSERT", "ASSERT_NOT", "BRANCH", "GROUPREF_EXISTS")


def _node(op: Any, value: Any) -> str:
    name = str(op)
    if name == "LITERAL":
        if value == NEWLINE:
            raise LineBreak("the pattern holds a line break (\\n)")
        return _char(value)
    if name == "NOT_LITERAL":
        return f"[^{_char(value)}]"
    if name == "ANY":
        return "."
    if name == "IN":
        return _class(value)
    if name == "AT":
        try:
            return _ANCHORS[str(value)]
        except KeyError:
            raise Untranslatable(f"anchor {value}") from None
    if name == "BRANCH":  # an alternative that needs a line break is one that never matches: left out
        alternatives = [written for branch in value[1] if (written := _unless_line_break(branch)) is not None]
        if not alternatives:
            raise LineBreak("every alternative holds a line break (\\n)")
        return "(?:" + "|".join(alternatives) + ")"
    if name == "SUBPATTERN":
        group, add, remove, item = value
        flags = _flags(add) + ("-" + _flags(remove) if _flags(remove) else "")
        inner = f"(?{flags}:{_sequence(item)})" if flags else _sequence(item)
        return f"({inner})" if group is not None else (inner if flags else f"(?:{inner})")
    if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
        return _repeat(name, value)
    if name == "GROUPREF":
        return f"\\g{{{value}}}"
    if name == "GROUPREF_EXISTS":
        group, yes, no = value
        return f"(?({group}){_sequence(yes)}" + (f"|{_sequence(no)}" if no is not None else "") + ")"
    if name in ("ASSERT", "ASSERT_NOT"):
        direction, item = value
        kind = ("=" if name == "ASSERT" else "!") if direction == 1 else ("<=" if name == "ASSERT" else "<!")
        return f"(?{kind}{_sequence(item)})"
    if name == "ATOMIC_GROUP":
        return f"(?>{_sequence(value)})"
    raise Untranslatable(f"{name} in the pattern")


def _sequence(items: Any) -> str:
    return "".join(_node(op, value) for op, value in items)


def for_ripgrep(pattern: str, ignore_case: bool = False) -> str:
    """`pattern` (Python syntax) for rg's `--engine auto`; raises LineBreak or Untranslatable (see the module)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Python's own compile already warned (a possible nested set, say)
        try:
            tree = _parser.parse(pattern, re.IGNORECASE if ignore_case else 0)
        except re.error as exc:
            raise Untranslatable(str(exc)) from exc
    try:
        body = _sequence(tree)
        flags = _flags(tree.state.flags)
    except (LineBreak, Untranslatable):
        raise
    except Exception as exc:  # a tree shaped as we did not expect: Python's `re` searches instead
        raise Untranslatable(f"{type(exc).__name__}: {exc}") from exc
    return (f"(?{flags})" if flags else "") + body
