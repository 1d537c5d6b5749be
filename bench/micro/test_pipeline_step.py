"""One new step of the pipeline on a long history, the step before it already planned (as the engine runs)."""

from __future__ import annotations

import itertools
from pathlib import Path

from deepmem.transform.plan import apply_transform, plan_transform
from deepmem.types import Settings
from deepmem.vault.sessionio import read_session

SESSION = Path(__file__).resolve().parents[2] / "fixtures" / "sessions" / "django-15499.json"


def test_new_step(benchmark) -> None:
    """plan + apply for a history whose newest message was never seen; the previous step is planned in setup."""
    messages = read_session(str(SESSION)).messages
    settings = Settings()
    previous, newest = messages[:-1], messages[-1]
    rounds = itertools.count()

    def setup():
        plan_transform(previous, settings)
        fresh = {**newest, "parts": [*newest["parts"], {"id": f"prt_round_{next(rounds)}", "type": "text", "text": "next"}]}
        return ([*previous, fresh],), {}

    def step(history):
        return apply_transform(history, plan_transform(history, settings))

    result = benchmark.pedantic(step, setup=setup, rounds=50)
    assert len(result) == len(messages)
