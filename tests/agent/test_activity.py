"""A quiet moment: no turn running, and none started or ended for a while (litellm's import waits for one)."""

from __future__ import annotations

import anyio
import pytest

from coder_agent.agent.activity import Activity

pytestmark = pytest.mark.anyio


async def quiet_after(activity: Activity, first: float, then: float) -> float:
    started = anyio.current_time()
    await activity.quiet(first, then)
    return anyio.current_time() - started


async def test_before_any_turn_it_is_quiet_after_the_first_wait() -> None:
    with anyio.fail_after(5):
        waited = await quiet_after(Activity(), first=0.3, then=0.05)
    assert 0.25 <= waited < 2


async def test_a_running_turn_is_never_quiet_and_a_finished_one_is_after_the_shorter_wait() -> None:
    activity = Activity()
    returned: list[float] = []

    async def wait() -> None:
        returned.append(await quiet_after(activity, first=0.2, then=0.3))

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tasks:
            with activity.turn():
                tasks.start_soon(wait)
                await anyio.sleep(0.6)  # longer than `first`: a turn is running
                assert returned == []
            ended = anyio.current_time()
        assert anyio.current_time() - ended >= 0.25  # `then` after the turn ended
    assert returned and returned[0] >= 0.85
