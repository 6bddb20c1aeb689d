"""The contract helpers assert on both paths' outcomes: let pytest show the difference when they disagree."""

from __future__ import annotations

import pytest

pytest.register_assert_rewrite("tests.support.contract")
