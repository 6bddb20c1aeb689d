"""Sales reports."""

from __future__ import annotations

from shop import pricing


def daily_report(orders: list[list[tuple[float, int]]]) -> str:
    totals = [pricing.calc_total(order) for order in orders]
    return f"{len(orders)} orders, {sum(totals):.2f} in total"
