"""Runtime settings, read from the environment."""

from __future__ import annotations

import os

BASE_PORT = 8000
# Each deployment slot listens on its own port: BASE_PORT + slot offset.
SLOT_OFFSETS = {"blue": 211, "green": 473, "canary": 990}
DEFAULT_SLOT = "green"


def port() -> int:
    if "APP_PORT" in os.environ:
        return int(os.environ["APP_PORT"])
    slot = os.environ.get("APP_SLOT", DEFAULT_SLOT)
    return BASE_PORT + SLOT_OFFSETS[slot]
