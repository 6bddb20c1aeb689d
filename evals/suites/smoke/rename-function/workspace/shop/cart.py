"""A shopping cart."""

from __future__ import annotations

from shop.pricing import calc_total


class Cart:
    def __init__(self) -> None:
        self.lines: list[tuple[float, int]] = []

    def add(self, price: float, quantity: int = 1) -> None:
        self.lines.append((price, quantity))

    def total(self) -> float:
        return calc_total(self.lines)

    def net_total(self) -> float:
        return calc_total(self.lines, with_vat=False)
