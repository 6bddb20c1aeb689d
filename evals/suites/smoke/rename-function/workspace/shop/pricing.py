"""Prices of orders."""

from __future__ import annotations

VAT = 0.21


def calc_total(lines: list[tuple[float, int]], with_vat: bool = True) -> float:
    """The total of (unit price, quantity) lines, rounded to cents."""
    net = sum(price * quantity for price, quantity in lines)
    return round(net * (1 + VAT) if with_vat else net, 2)
