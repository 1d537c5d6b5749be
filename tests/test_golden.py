"""Golden edits of the transform on real OpenCode payloads: exact bytes, diff on mismatch.

Each `fixtures/golden/<case>.json` holds one case: a one-line `note` on why it exists, the
session `fixture` it reads from `fixtures/sessions/`, the `settings` it overrides, the `tier`
it forces (null: chosen from the history), then what the transform does to that session:
`edits` (each replaced part, by message and part id, with its replacement) and `appended`
(the parts added after the last message). A change in the output shows as a readable diff
of those edits.

Regenerate the edits after an intended change with `pytest tests/test_golden.py
--update-golden` (note, fixture, settings and tier are kept). To add a case, write a file
with the first four fields and `"edits": []`, then regenerate.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

import msgspec
import orjson
import pytest

from deepmem.transform.plan import TransformPlan, apply_transform, plan_transform
from deepmem.types import Message, Settings
from deepmem.vault.ccr import CCRStore
from deepmem.vault.restore import restore_messages
from deepmem.vault.sessionio import encode_json, read_session

from .conftest import FIXTURES

GOLDEN = FIXTURES / "golden"
CASES = sorted(path.stem for path in GOLDEN.glob("*.json"))


class Case(msgspec.Struct):
    """What a golden file says about its case, besides the edits."""

    note: str
    fixture: str
    settings: dict[str, Any]
    tier: str | None


def read_case(name: str) -> Case:
    """The case described by `fixtures/golden/<name>.json`."""
    return msgspec.convert(orjson.loads((GOLDEN / f"{name}.json").read_bytes()), Case)


def plan_case(case: Case) -> tuple[list[Message], TransformPlan, Settings]:
    """The fixture's messages, the transform's plan for them, and the settings used."""
    messages = read_session(str(FIXTURES / "sessions" / case.fixture)).messages
    settings = msgspec.structs.replace(Settings(), **case.settings)
    return messages, plan_transform(messages, settings, case.tier), settings


def golden_bytes(case: Case) -> bytes:
    """The golden file the current code writes for a case."""
    _, plan, _ = plan_case(case)
    edits = [{"message": edit.message_id, "part": edit.part_id, "replacement": edit.part} for edit in plan.edits]
    return encode_json({**msgspec.to_builtins(case), "edits": edits, "appended": plan.tail_parts})


def test_every_case_has_a_note() -> None:
    """A case without a reason to exist is noise: each golden says why it is there."""
    assert CASES
    for name in CASES:
        assert read_case(name).note.strip(), name


@pytest.mark.parametrize("name", CASES)
def test_golden(name: str, request: pytest.FixtureRequest) -> None:
    """The transform's edits are byte-identical to the committed golden file."""
    path = GOLDEN / f"{name}.json"
    actual = golden_bytes(read_case(name))
    if request.config.getoption("--update-golden"):
        path.write_bytes(actual)
        return
    expected = path.read_bytes()
    if actual != expected:
        diff = difflib.unified_diff(
            expected.decode().splitlines(), actual.decode().splitlines(), f"golden/{name}.json", "actual", lineterm="", n=2
        )
        pytest.fail("golden mismatch (rerun with --update-golden if intended):\n" + "\n".join(list(diff)[:200]))


@pytest.mark.parametrize("name", CASES)
def test_golden_restores_exactly(name: str, tmp_path: Path) -> None:
    """Every golden case restores to its input through CCR."""
    messages, plan, settings = plan_case(read_case(name))
    store = CCRStore(tmp_path, settings)
    store.put_all(plan.originals)
    restored = restore_messages(apply_transform(messages, plan), store)
    assert restored == messages
