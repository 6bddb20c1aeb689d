"""Lines added and removed between two contents, at a bounded cost whatever they hold.

difflib is exact but quadratic where lines repeat or move: a shuffled file of 400,000 lines took 17 s, and a
random 10,000 lines drawn from a hundred 0.8 s. So the lines both contents start and end with are set aside
first (an edit in a large file leaves most of it there), and difflib only looks at contents, or a middle, of at
most `EXACT_LINES` lines a side (tens of milliseconds at worst). A larger middle is matched the way patience diff
does: the lines that occur once in each side, the longest run of them in the same order (O(n log n)), each
match grown over the equal lines around it; what is left between matches counts as removed and added. That is
what a diff shows for a block replaced or a file shuffled, and at most a little more elsewhere. The standard
library has no diff that is not quadratic, hence this one.

Blocking and CPU-bound: callers run it in a worker thread, and no single step holds the GIL for long.
"""

from __future__ import annotations

import bisect
import difflib
from array import array
from collections import Counter
from collections.abc import Sequence

EXACT_LINES = 2000
_SLICE = 10_000


def _lines(data: bytes | None) -> list[str]:
    return [] if data is None else data.decode("utf-8", "replace").splitlines()


def counts(before: bytes | None, after: bytes | None) -> tuple[int, int]:
    """Lines added and removed between two contents (None: no file)."""
    old: Sequence[str] = _lines(before)
    new: Sequence[str] = _lines(after)
    if len(old) <= EXACT_LINES and len(new) <= EXACT_LINES:
        return _exact(old, new)
    old, new = _middles(old, new)
    if len(old) <= EXACT_LINES and len(new) <= EXACT_LINES:
        return _exact(old, new)
    matched = _matched(old, new)
    return len(new) - matched, len(old) - matched


def difflib_bounded(old: Sequence[str], new: Sequence[str]) -> bool:
    """Whether difflib over these lines is cheap: few lines, or few between what they start and end with alike."""
    if len(old) <= EXACT_LINES and len(new) <= EXACT_LINES:
        return True
    old_middle, new_middle = _middles(old, new)
    return len(old_middle) <= EXACT_LINES and len(new_middle) <= EXACT_LINES


def _middles(old: Sequence[str], new: Sequence[str]) -> tuple[Sequence[str], Sequence[str]]:
    """The lines between the ones both start with and the ones both end with."""
    start = 0
    while start < len(old) and start < len(new) and old[start] == new[start]:
        start += 1
    end_old, end_new = len(old), len(new)
    while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
        end_old, end_new = end_old - 1, end_new - 1
    return old[start:end_old], new[start:end_new]


def _exact(old: Sequence[str], new: Sequence[str]) -> tuple[int, int]:
    added = removed = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new).get_opcodes():
        if tag != "equal":
            removed += i2 - i1
            added += j2 - j1
    return added, removed


def _tally(lines: Sequence[str]) -> Counter[str]:
    """How often each line occurs. In slices: one C call over 400,000 lines holds the GIL for a fifth of a second,
    and the event loop's thread waits that long for it."""
    seen: Counter[str] = Counter()
    for start in range(0, len(lines), _SLICE):
        seen.update(lines[start : start + _SLICE])
    return seen


def _anchors(old: Sequence[str], new: Sequence[str]) -> tuple[array[int], array[int]]:
    """The indexes in old and in new of the lines unique to each side that form the longest run in the same order."""
    in_old, in_new = _tally(old), _tally(new)
    at_new = {line: index for index, line in enumerate(new) if in_new[line] == 1}
    del in_new
    # the pairs, in `old` order, as two arrays: 16 bytes a pair rather than a tuple's 90
    at_old, in_order = array("l"), array("l")
    for index, line in enumerate(old):
        if in_old[line] == 1 and line in at_new:
            at_old.append(index)
            in_order.append(at_new[line])
    del in_old, at_new
    # Longest increasing run of the `new` indexes: patience sorting.
    tails = array("l")  # the smallest `new` index that ends a run of each length
    tail_pair = array("l")  # which pair that is
    previous = array("l", [-1]) * len(in_order)
    for number, index in enumerate(in_order):
        length = bisect.bisect_left(tails, index)
        if length == len(tails):
            tails.append(index)
            tail_pair.append(number)
        else:
            tails[length], tail_pair[length] = index, number
        previous[number] = tail_pair[length - 1] if length else -1
    run_old, run_new = array("l"), array("l")
    number = tail_pair[-1] if tail_pair else -1
    while number != -1:
        run_old.append(at_old[number])
        run_new.append(in_order[number])
        number = previous[number]
    run_old.reverse()
    run_new.reverse()
    return run_old, run_new


def _matched(old: Sequence[str], new: Sequence[str]) -> int:
    """How many lines the anchors and the equal lines around them match."""
    matched = 0
    low_old = low_new = 0
    run_old, run_new = _anchors(old, new)
    run_old.append(len(old))  # the end: the gap after the last anchor
    run_new.append(len(new))
    for high_old, high_new in zip(run_old, run_new, strict=True):
        # the gap between the last match and this anchor: equal lines from either end are matches too
        while low_old < high_old and low_new < high_new and old[low_old] == new[low_new]:
            low_old, low_new, matched = low_old + 1, low_new + 1, matched + 1
        end_old, end_new = high_old, high_new
        while end_old > low_old and end_new > low_new and old[end_old - 1] == new[end_new - 1]:
            end_old, end_new, matched = end_old - 1, end_new - 1, matched + 1
        if high_old < len(old):
            matched += 1  # the anchor itself
        low_old, low_new = high_old + 1, high_new + 1
    return matched
