"""The whisper threshold rule of bench/runners/cross_session.py: chosen on one corpus, checked on the others."""

from __future__ import annotations

from bench.runners.cross_session import choose, merit


def row(corpus: str, threshold: float | None, precision: float | None, kept: float) -> dict:
    """One sweep row with only what the rule reads."""
    return {"corpus": corpus, "whisper_min_score": threshold, "whisper_precision": precision,
            "whisper_useful_kept": kept}


def test_merit_is_zero_when_nothing_is_shown() -> None:
    """A threshold that silences the whisper has no merit, however precise it was before."""
    assert merit(row("a", 3.0, None, 0.0)) == 0.0
    assert merit(row("a", 0.5, 0.8, 0.5)) == 0.4


def test_the_rule_picks_the_best_threshold_on_its_corpus_and_checks_the_other() -> None:
    """The threshold with the highest merit on the tuning corpus wins; the other corpus says if it holds there."""
    rows = [row("tune", None, 0.5, 1.0), row("tune", 0.0, 0.7, 0.9), row("tune", 1.0, 0.9, 0.3),
            row("check", None, 0.2, 1.0), row("check", 0.0, 0.1, 0.5), row("check", 1.0, 0.0, 0.0)]
    assert choose(rows, "tune") == (0.0, {"check": False})
    rows[4] = row("check", 0.0, 0.3, 0.9)
    assert choose(rows, "tune") == (0.0, {"check": True})


def test_ties_go_to_the_lowest_threshold() -> None:
    """When thresholds change nothing, the rule keeps the whisper ungated."""
    rows = [row("tune", None, 0.5, 1.0), row("tune", -1.0, 0.5, 1.0), row("other", None, 0.2, 1.0),
            row("other", -1.0, 0.2, 1.0)]
    assert choose(rows, "tune") == (None, {"other": True})
