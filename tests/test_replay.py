"""The one replay loop: every step metered per contender, pauses from the timestamps billed."""

from __future__ import annotations

from deepmem.bill.prices import FAMILIES
from deepmem.history import step_indexes
from deepmem.replay.audit import Estimates
from deepmem.replay.loop import Deepmem, Uncompressed, replay_session, session_steps
from deepmem.types import Settings

from .test_jumps import django, with_times

MINUTE = 60_000


def test_every_step_is_metered_for_every_contender() -> None:
    messages = django()
    meters = replay_session(messages, [Uncompressed(), Deepmem(Settings())], Estimates())
    steps = len(list(step_indexes(messages)))
    assert meters["none"].steps == meters["deepmem"].steps == steps
    assert meters["none"].quoted == meters["deepmem"].quoted > 0, "both see the same quoted lines"
    assert meters["none"].quoted_visible == meters["none"].quoted, "the recorded history shows every quoted line"
    assert meters["deepmem"].tokens < meters["none"].tokens


def test_a_pause_past_the_cache_lifetime_is_billed_cold() -> None:
    """Thirty minutes after step 20 the cache is gone: the same tokens cost more."""
    messages = django()
    paused = with_times(messages, 20, 30 * MINUTE)
    assert max(step.pause_ms for step in session_steps(paused)) >= 30 * MINUTE
    quiet = replay_session(messages, [Uncompressed()], Estimates())["none"]
    late = replay_session(paused, [Uncompressed()], Estimates())["none"]
    anthropic = FAMILIES["anthropic"]
    assert late.tokens == quiet.tokens
    assert late.cost(anthropic) > quiet.cost(anthropic)
