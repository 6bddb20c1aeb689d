"""Lines added and removed: what difflib says where it is cheap, and close to it at a bounded cost where it is not."""

from __future__ import annotations

import difflib
import random

from coder_agent.agent.workspace.line_counts import EXACT_LINES, counts


def difflib_counts(before: list[str], after: list[str]) -> tuple[int, int]:
    """What the per-turn summary counted before: difflib's unified diff over the whole contents."""
    lines = list(difflib.unified_diff(before, after, lineterm="", n=0))
    added = sum(1 for line in lines if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in lines if line.startswith("-") and not line.startswith("---"))
    return added, removed


def joined(lines: list[str]) -> bytes:
    return "".join(f"{line}\n" for line in lines).encode()


def test_small_contents_are_counted_as_difflib_counts_them() -> None:
    rng = random.Random(5)
    for _ in range(500):
        before = [str(rng.randrange(4)) for _ in range(rng.randrange(30))]
        after = [str(rng.randrange(4)) for _ in range(rng.randrange(30))]
        assert counts(joined(before), joined(after)) == difflib_counts(before, after), (before, after)
    assert counts(None, b"a\nb\n") == (2, 0) and counts(b"a\n", None) == (0, 1)


def test_an_edit_in_a_large_file_is_counted_exactly_around_what_stayed() -> None:
    before = [f"line {number}" for number in range(50_000)]
    after = [*before[:20_000], "new one", "new two", *before[20_003:]]
    assert counts(joined(before), joined(after)) == difflib_counts(before, after) == (2, 3)


def test_scattered_edits_past_the_exact_bound_are_counted_line_for_line() -> None:
    before = [f"row {number}" for number in range(100_000)]
    after = list(before)
    for number in range(0, 100_000, 1000):
        after[number] = f"changed {number}"
    del after[50_500]
    assert len(after) - EXACT_LINES > 0
    assert counts(joined(before), joined(after)) == (100, 101)


def test_a_shuffled_file_counts_nearly_every_line_changed_as_a_diff_would() -> None:
    before = [str(number) for number in range(100_000)]
    after = list(before)
    random.Random(1).shuffle(after)
    added, removed = counts(joined(before), joined(after))
    assert added == removed and 0.98 * len(before) < added < len(before)


def test_lines_that_repeat_around_the_changes_are_matched_not_counted() -> None:
    """Code: each function's name is unique, its blank lines and braces are not; a line put in one function and
    one taken out of another, far apart."""
    before = [line for number in range(5_000) for line in (f"def f{number}():", "    return 1", "", "}")]
    after = list(before)
    after.insert(4 * 1_000 + 2, "    print('hi')")
    del after[4 * 4_000 + 1 + 1]
    assert counts(joined(before), joined(after)) == (1, 1)
