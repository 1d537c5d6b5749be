"""The cheapest schedule of jumps in hindsight, by dynamic programming over jump points.

The online schedule (`deepmem.transform.jumps`) decides each jump knowing only the steps so far.
In hindsight, knowing every step of the session, the cheapest schedule under the same
cost model is found exactly: the state before step t is the boundary b in force, and
step t either keeps it or jumps to t − tail_steps. A step's cost depends only on b and
the jump (`deepmem.transform.jumps.step_cost`, the online schedule's own), so the table V[t][b]
of the cheapest cost of steps t…S is filled backwards in O(S²). The replay then runs the
pipeline with the schedule found, same compressors and prices, and bills it like every
other contender.
"""

from __future__ import annotations

import numpy as np

from deepmem.bill.prices import PriceModel
from deepmem.history import message_steps
from deepmem.replay.loop import Deepmem
from deepmem.transform.additions import Additions
from deepmem.transform.jumps import Sizes, jump_cost, pressure_ceiling, request_tokens, stay_cost, step_cost
from deepmem.transform.schedule import session_sizes
from deepmem.types import Message, Settings


def schedule_cost(sizes: Sizes, jumps: tuple[int, ...], settings: Settings, prices: PriceModel) -> float:
    """Model cost of a whole session under a given schedule (jumps made at target + tail_steps)."""
    made = {jump + settings.tail_steps: jump for jump in jumps if jump > 0}
    total, boundary = 0.0, 0
    for step in range(1, len(sizes.tokens)):
        target = made.get(step, boundary)
        total += step_cost(sizes, step, boundary, target, prices)
        boundary = target
    return total


def hindsight_jumps(sizes: Sizes, settings: Settings, prices: PriceModel) -> tuple[int, ...]:
    """The schedule of least model cost knowing the whole session (requests kept under the window).

    Each step's row of the table is priced by `deepmem.transform.jumps`' own step costs, given every
    boundary at once as an array.
    """
    steps = len(sizes.tokens) - 1
    tail = settings.tail_steps
    table = Sizes(
        np.asarray(sizes.tokens, dtype=np.float64),
        np.asarray(sizes.probed, dtype=np.float64),
        sizes.cold,
        np.asarray(sizes.marked, dtype=np.float64) if sizes.marked else (),
        sizes.tail_steps,
    )
    ceiling = pressure_ceiling(sizes, settings)
    limit = ceiling - sizes.frame.host - sizes.frame.added if ceiling else np.inf
    boundaries = np.arange(steps + 1)
    later = np.zeros(steps + 1)
    choice = np.zeros((steps + 1, steps + 1), dtype=bool)
    for step in range(steps, 0, -1):
        stay = stay_cost(table, step, boundaries, prices)
        stay = np.where(request_tokens(table, step, boundaries) > limit, np.inf, stay) + later
        target = step - tail
        now = stay
        if target > 0:
            jump = jump_cost(table, step, boundaries, target, prices) + later[target]
            better = (boundaries < target) & (jump < stay)
            choice[step] = better
            now = np.where(better, jump, stay)
        later = now
    jumps, boundary = [0], 0
    for step in range(1, steps + 1):
        if choice[step, boundary]:
            boundary = step - tail
            jumps.append(boundary)
    return tuple(jumps)


class Hindsight(Deepmem):
    """deepmem with the cheapest schedule of jumps knowing the whole session."""

    def __init__(self, settings: Settings, prices: PriceModel, session: list[Message], additions: Additions | None = None):
        super().__init__(settings, name=f"hindsight@{prices.name}", prices=prices, additions=additions)
        self.schedule = hindsight_jumps(session_sizes(session, settings, prices), settings, prices)

    def jumps(self, history: list[Message]) -> tuple[int, ...]:
        """The hindsight schedule's jumps made by this step."""
        reachable = message_steps(history)[-1] - self.settings.tail_steps if history else 0
        return tuple(jump for jump in self.schedule if jump <= max(reachable, 0))

