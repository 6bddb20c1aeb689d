import pytest
from inventory import Inventory


def test_restocking_a_new_item_starts_from_zero():
    stock = Inventory()
    stock.restock("nuts", 3)
    stock.restock("nuts", 2)
    assert stock.level("nuts") == 5


def test_the_rules_still_hold():
    stock = Inventory()
    with pytest.raises(ValueError):
        stock.restock("nuts", 0)
    stock.restock("nuts", 1)
    with pytest.raises(ValueError):
        stock.take("nuts", 2)
