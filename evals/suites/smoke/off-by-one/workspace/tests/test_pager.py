from pager import page_count, paginate


def test_page_count():
    assert page_count(0, 10) == 0
    assert page_count(25, 10) == 3


def test_first_page():
    assert paginate(list(range(25)), 1, 10) == list(range(10))
