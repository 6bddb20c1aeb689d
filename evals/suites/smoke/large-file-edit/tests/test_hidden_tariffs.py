import difflib
import os
from pathlib import Path

import tariffs


def test_every_tariff_follows_the_pattern():
    for code in range(1, 401):
        function = getattr(tariffs, f"tariff_{code:04d}")
        assert function(100.0) == round(100.0 * (1 + code / 10000), 4), code


def test_only_one_line_changed():
    before = Path(os.environ["EVAL_ORIGINAL_WORKSPACE"], "tariffs.py").read_text().splitlines()
    after = Path("tariffs.py").read_text().splitlines()
    diff = [line for line in difflib.unified_diff(before, after, lineterm="", n=0) if line[:1] in "+-"]
    assert diff == ["--- ", "+++ ", "-    return round(amount * 1.2000, 4)", "+    return round(amount * 1.0200, 4)"]
