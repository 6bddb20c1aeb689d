from inventory import Inventory


def test_restock_then_take():
    stock = Inventory()
    stock.restock("bolts", 10)
    stock.take("bolts", 4)
    assert stock.level("bolts") == 6
