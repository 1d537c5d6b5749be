"""The fidelity gate: evidence from real sessions survives compression, or comes back.

Each session of `fixtures/evidence/sessions/` is compressed at its last step (default
settings, automatic tier and tier high). Every evidence item (error line, failing test,
edited path, exit code) must be visible in the compressed text of the part that held it,
or restorable: present in an original named by a marker in that part, or in the part's
whole original (`metadata.deepmem.part`). The share visible without expansion is held
against `fixtures/evidence/baseline.json` (`pytest --update-baseline` rewrites it).
Regenerate the fixtures with `python -m bench.makers.evidence`; print the table with
`python -m bench.runners.fidelity`.
"""

from __future__ import annotations

import functools
import json

import pytest

from bench.runners import fidelity
from deepmem.vault.sessionio import encode_json

TIERS = {"default": None, "high": "high"}
CORPORA = sorted(fidelity.EVIDENCE_SETS)
ALLOWED_DROP = 0.01


@functools.cache
def outcomes(corpus: str, tier: str) -> dict[str, list[fidelity.EvidenceOutcome]]:
    """Per session, each evidence item with 'visible', 'restorable' or 'lost' (computed once)."""
    return fidelity.outcomes(TIERS[tier], folder=fidelity.EVIDENCE_SETS[corpus])


def visible_share(corpus: str, tier: str) -> float:
    """Share of all evidence items visible without expansion."""
    statuses = [status for rows in outcomes(corpus, tier).values() for _, status, _ in rows]
    return sum(status == "visible" for status in statuses) / len(statuses)


def test_fixtures_hold_every_kind_of_evidence() -> None:
    """The fixtures exercise all four kinds of evidence, in every session."""
    evidence = fidelity.load_evidence()
    assert len(evidence) >= 10
    kinds = {item["kind"] for items in evidence.values() for item in items}
    assert kinds == {"error line", "failing test", "edited path", "exit code"}
    assert all({"exit code", "edited path"} <= {item["kind"] for item in items} for items in evidence.values())


def test_status_distinguishes_visible_restorable_lost() -> None:
    """The check itself: a cut line is restorable through its marker's key, never visible."""
    key = "0" * 32
    part = {"type": "text", "text": f"head\n[… 1 of 3 lines cut · ccr:{key} · deep_expand to restore]"}
    originals = {key: "FAILED tests/test_x.py::test_y"}
    assert fidelity.item_status("head", part, originals) == "visible"
    assert fidelity.item_status("FAILED tests/test_x.py::test_y", part, originals) == "restorable"
    assert fidelity.item_status("FAILED tests/test_x.py::test_y", part, {}) == "lost"


@pytest.mark.parametrize("corpus", CORPORA)
@pytest.mark.parametrize("tier", sorted(TIERS))
def test_every_item_visible_or_restorable(corpus: str, tier: str) -> None:
    """100% of evidence is visible or restorable through the markers of its part."""
    lost = [
        f"{name}: {item['kind']} {item['text']!r} (part {item['part']})"
        for name, rows in outcomes(corpus, tier).items()
        for item, status, _ in rows
        if status == "lost"
    ]
    assert not lost, f"{len(lost)} evidence items lost:\n" + "\n".join(lost[:20])


@pytest.mark.parametrize("corpus", CORPORA)
@pytest.mark.parametrize("tier", sorted(TIERS))
def test_visible_share_holds_baseline(corpus: str, tier: str, request: pytest.FixtureRequest) -> None:
    """The share visible without expansion does not drop more than a point below the corpus's baseline."""
    share = round(visible_share(corpus, tier), 4)
    baseline_file = fidelity.EVIDENCE_SETS[corpus] / "baseline.json"
    baseline = json.loads(baseline_file.read_text(encoding="utf-8")) if baseline_file.exists() else {}
    if request.config.getoption("--update-baseline"):
        baseline_file.write_bytes(encode_json({**baseline, tier: share}))
        return
    assert tier in baseline, "no committed baseline; run pytest tests/test_fidelity.py --update-baseline"
    assert share >= baseline[tier] - ALLOWED_DROP, (
        f"visible evidence fell to {share:.1%} (baseline {baseline[tier]:.1%})"
    )
