"""Stock levels of a small warehouse."""

from __future__ import annotations


class Inventory:
    def __init__(self) -> None:
        self.items: dict[str, int] = {}

    def restock(self, name: str, quantity: int) -> None:
        if quantity <= 0:
            raise ValueError("quantity must be positive")
        self.items[name] += quantity

    def take(self, name: str, quantity: int) -> None:
        if self.items.get(name, 0) < quantity:
            raise ValueError(f"not enough {name}")
        self.items[name] -= quantity

    def level(self, name: str) -> int:
        return self.items.get(name, 0)
