"""Golden outputs of the transform on real OpenCode payloads: exact bytes, diff on mismatch.

Regenerate after an intended change with `pytest tests/test_golden.py --update-golden`.
"""

from __future__ import annotations

import difflib

import msgspec
import pytest

from deepmem.ccr import CCRStore
from deepmem.pipeline import apply_transform, plan_transform
from deepmem.restore import restore_messages
from deepmem.sessionio import encode_json, read_session
from deepmem.types import Settings

from .conftest import FIXTURES

CASES = {
    # name: (session fixture, settings overrides, tier or None for auto)
    "demo-defaults": ("opencode-demo.json", {}, None),
    "demo-small-tail": ("opencode-demo.json", {"tail_steps": 2, "batch_steps": 2}, None),
    "transform-high": ("opencode-transform.json", {"tail_steps": 1, "batch_steps": 1}, "high"),
    "django-defaults": ("django-15499.json", {}, None),
    "django-medium": ("django-15499.json", {"tail_steps": 2, "batch_steps": 5}, "medium"),
}


def run_case(name: str) -> bytes:
    """Compress one case and return the output bytes."""
    fixture, overrides, tier = CASES[name]
    session = read_session(str(FIXTURES / "sessions" / fixture))
    settings = msgspec.structs.replace(Settings(), **overrides)
    plan = plan_transform(session.messages, settings, tier)
    session.messages = apply_transform(session.messages, plan)
    return encode_json(session.to_json())


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden(name: str, request: pytest.FixtureRequest) -> None:
    """The transform's output is byte-identical to the committed golden file."""
    golden = FIXTURES / "golden" / f"{name}.json"
    actual = run_case(name)
    if request.config.getoption("--update-golden") or not golden.exists():
        if not request.config.getoption("--update-golden"):
            pytest.fail(f"missing golden {golden.name}; run with --update-golden")
        golden.write_bytes(actual)
        return
    expected = golden.read_bytes()
    if actual != expected:
        diff = difflib.unified_diff(
            expected.decode().splitlines(),
            actual.decode().splitlines(),
            f"golden/{name}.json",
            "actual",
            lineterm="",
            n=2,
        )
        pytest.fail("golden mismatch (rerun with --update-golden if intended):\n" + "\n".join(list(diff)[:200]))


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_restores_exactly(name: str, tmp_path) -> None:
    """Every golden case restores to its input through CCR."""
    fixture, overrides, tier = CASES[name]
    session = read_session(str(FIXTURES / "sessions" / fixture))
    settings = msgspec.structs.replace(Settings(), **overrides)
    plan = plan_transform(session.messages, settings, tier)
    store = CCRStore(tmp_path, settings)
    store.put_all(plan.originals)
    restored = restore_messages(apply_transform(session.messages, plan), store)
    assert restored == session.messages
