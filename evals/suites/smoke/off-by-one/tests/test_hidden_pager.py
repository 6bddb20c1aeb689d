import os
from pathlib import Path

import pytest
from pager import paginate

ITEMS = list(range(25))


def test_pages_are_one_based_and_cover_every_item_once():
    assert paginate(ITEMS, 1, 10) == list(range(10))
    assert paginate(ITEMS, 2, 10) == list(range(10, 20))
    assert paginate(ITEMS, 3, 10) == list(range(20, 25))
    assert paginate(ITEMS, 4, 10) == []


def test_bad_arguments_are_still_refused():
    with pytest.raises(ValueError):
        paginate(ITEMS, 0, 10)


def test_the_workspace_test_is_unchanged():
    original = Path(os.environ["EVAL_ORIGINAL_WORKSPACE"], "tests", "test_pager.py").read_text()
    assert Path("tests", "test_pager.py").read_text() == original
