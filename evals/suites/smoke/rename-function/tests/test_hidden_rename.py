from pathlib import Path

from shop import cart, pricing, report


def test_the_function_has_its_new_name_and_no_alias():
    assert pricing.compute_order_total([(10.0, 2)]) == 24.2
    assert not hasattr(pricing, "calc_total")


def test_callers_use_the_new_name():
    c = cart.Cart()
    c.add(10.0, 2)
    assert c.total() == 24.2
    assert c.net_total() == 20.0
    assert report.daily_report([[(10.0, 1)], [(5.0, 2)]]) == "2 orders, 24.20 in total"


def test_the_old_name_is_gone_from_every_file():
    for path in Path(".").rglob("*.py"):
        assert "calc_total" not in path.read_text(), path
