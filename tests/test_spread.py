"""The typical session beside the pooled ratio: the spread of per-session cost ratios, in the
replay's and the comparison's tables, JSON and chart."""

from __future__ import annotations

from pathlib import Path

from bench.corpora import FIXTURES, billed_at
from bench.frames import Frame
from bench.report import draw_sessions, format_totals, markdown_table
from bench.runners.compare import comparison
from bench.runners.replay import parse_models, replay_corpus
from deepmem.bill.accounting import Spread, session_spread
from deepmem.types import Settings

SHORT = [FIXTURES / "opencode-demo.json", FIXTURES / "opencode-transform.json"]


def test_the_spread_of_sessions_is_their_median_those_costlier_than_none_and_the_worst() -> None:
    spread = session_spread([0.8, 1.2, 0.9, 1.0])
    assert spread == Spread(sessions=4, median=0.95, costlier=1, worst=1.2)
    assert spread.costlier_share == 0.25
    assert spread.describe() == "median 0.950×, 1 of 4 costlier than none, worst 1.200×"
    assert session_spread([]) == Spread()


def test_codex_sessions_are_billed_at_openai_prices_and_the_rest_at_anthropic() -> None:
    assert billed_at("codex-graph") == "openai"
    assert billed_at("claude-entire") == billed_at("swe-gemini3") == billed_at("fixtures") == "anthropic"


def test_the_replay_reports_each_contender_s_sessions_one_by_one(tmp_path: Path) -> None:
    """The JSON holds the spread of every contender's sessions, the tables print it, the chart is drawn."""
    models = parse_models("anthropic")
    result = replay_corpus(SHORT, ["none", "deepmem"], models, Frame(), {}, Settings())
    ratios = [row["ratios"]["anthropic"]["deepmem@anthropic"]["cost_warm"] for row in result["sessions"]]
    spread = result["spread"]["anthropic"]["deepmem@anthropic"]
    assert spread == {"sessions": 2, "median": sum(ratios) / 2, "costlier": sum(r > 1 for r in ratios), "worst": max(ratios)}
    row = next(line for line in format_totals(result).splitlines() if line.startswith("deepmem@anthropic"))
    assert row.endswith(f"{spread['median']:>8.3f}{spread['costlier']:>5} of 2  {spread['worst']:>7.3f}")
    table = markdown_table({**comparison(result), "corpus": "fixtures"})
    line = next(line for line in table.splitlines() if line.startswith("| deepmem@anthropic"))
    assert f"| {spread['median']:.3f} | {spread['costlier']} of 2 | {spread['worst']:.3f} |" in line
    assert next(line for line in table.splitlines() if line.startswith("| none")).endswith("| - | - | - |")
    draw_sessions(result, tmp_path / "sessions.png", "anthropic")
    assert (tmp_path / "sessions.png").read_bytes().startswith(b"\x89PNG")


def test_the_gated_schedule_without_a_gate_is_the_priced_one_and_a_gate_only_holds_jumps_back() -> None:
    """The jump-gate bench prices the schedule deepmem runs when nothing is held back; a session
    behind its bill from the start (its additions) makes no paying jump under `not_behind`."""
    from bench.runners.jump_gates import gated_jumps, never, not_behind
    from deepmem.bill.prices import FAMILIES
    from deepmem.transform.jumps import RequestFrame, priced_jumps
    from deepmem.transform.schedule import session_sizes
    from deepmem.vault.sessionio import read_session

    prices, settings = FAMILIES["anthropic"], Settings()
    messages = read_session(str(FIXTURES / "django-15499.json")).messages
    sizes = session_sizes(messages, settings, prices, RequestFrame(host=7_018, added=300))
    priced = priced_jumps(sizes, settings, prices)
    assert gated_jumps(sizes, settings, prices, never) == priced
    assert len(priced) > 2 and not any(sizes.cold[1:])
    assert gated_jumps(sizes, settings, prices, not_behind) == (0,)
    assert priced[1] < gated_jumps(sizes, settings, prices, never, patience=2.0)[1]
    from bench.runners.jump_gates import first_on_warm_age

    guessed = gated_jumps(sizes, settings, prices, never, guess=first_on_warm_age)
    assert guessed[0] == 0 and list(guessed) == sorted(set(guessed)) and guessed[1] < priced[1]  # the guess comes first


def test_a_replay_may_change_one_setting_and_a_wrong_one_is_a_one_line_error(capsys) -> None:
    """`--setting NAME=VALUE` replays at a changed [compress] setting (the sweeps of a threshold)."""
    import argparse

    import pytest

    from bench.runners.replay import main, parse_setting, replay_settings

    assert replay_settings([parse_setting("capture_command_cap_tokens=350")]).capture_command_cap_tokens == 350
    assert replay_settings([]) == Settings()
    with pytest.raises(argparse.ArgumentTypeError):
        parse_setting("no_such_setting=1")
    with pytest.raises(SystemExit) as stopped:
        main(["--corpus", "fixtures", "--setting", "capture_command_cap_tokens=5"])
    assert stopped.value.code == 2 and "capture_command_cap_tokens" in capsys.readouterr().err.strip().splitlines()[-1]


def test_a_threshold_left_out_is_chosen_on_the_other_corpora_alone() -> None:
    """The smallest value keeping the quoted lines of every other corpus within 0.1 point of the best there."""
    from bench.runners.leave_one_out import leave_one_out

    def figures(support: float, cost: float) -> dict[str, float]:
        return {"support": support, "steps_supported": support, "cost_warm": cost, "cost_recovered": cost, "median": cost}

    by_value = {
        250.0: {"a": figures(0.90, 0.80), "b": figures(0.99, 0.80), "c": figures(0.99, 0.80)},
        500.0: {"a": figures(0.95, 0.85), "b": figures(0.99, 0.85), "c": figures(0.99, 0.85)},
        700.0: {"a": figures(0.95, 0.90), "b": figures(0.99, 0.90), "c": figures(0.95, 0.90)},
    }
    rows = leave_one_out(by_value)
    assert rows["a"]["chosen"]["lines"] == 250.0 and rows["a"]["held_out"]["lines"]["support"] == 0.90  # b, c lose nothing
    assert rows["b"]["chosen"]["lines"] == rows["c"]["chosen"]["lines"] == 500.0  # a loses lines at 250
    assert {row["chosen"]["reread"] for row in rows.values()} == {250.0}  # the cheapest, lines read again included
    assert set(rows["a"]["every"]) == {"250.0", "500.0", "700.0"}


def test_the_bounds_replay_deepmem_beside_hindsight_and_a_schedule_that_never_jumps() -> None:
    """Never jumping keeps at least the quoted lines deepmem keeps; the sessions over 1.03× are
    counted from the same per-session ratios the spread reports."""
    from bench.runners.bounds import NEVER_JUMPS, OVER, SCHEDULES, format_row, schedule_row

    contenders = ["none", *SCHEDULES.values()]
    result = replay_corpus([FIXTURES / "django-15499.json", *SHORT], contenders, parse_models("anthropic"), Frame(), {}, Settings())
    rows = {name: schedule_row(result, f"{contender}@anthropic", "anthropic") for name, contender in SCHEDULES.items()}
    assert NEVER_JUMPS == "fixed-tail4-batch1000"
    for name, contender in SCHEDULES.items():
        ratios = [row["ratios"]["anthropic"][f"{contender}@anthropic"] for row in result["sessions"]]
        assert rows[name]["over"] == sum(r["cost_warm"] > OVER for r in ratios)
        assert rows[name]["worst"] == max(r["cost_warm"] for r in ratios)
    assert rows["no jumps"]["lines"] >= rows["deepmem"]["lines"]
    assert rows["deepmem"]["pooled"] < rows["no jumps"]["pooled"]  # django-15499 runs long enough for jumps to pay
    assert format_row("fixtures", "deepmem", rows["deepmem"]).startswith("fixtures       deepmem      0.")


def test_the_bounds_can_give_deepmem_its_tool_schemas_alone() -> None:
    """`--tools-only` keeps each session's tool schemas and drops its memory, resume block and whispers."""
    from bench.runners.bounds import tools_only
    from deepmem.transform.additions import Additions

    given = {"s": Additions(tools=284, memory=300, resume=900, whispers={"m1": "<deep-memory-recall>x</deep-memory-recall>"})}
    assert tools_only(given) == {"s": Additions(tools=284)}
    assert tools_only(given)["s"].frame == 284


def test_an_unknown_corpus_is_a_one_line_error_in_the_corpus_studies(capsys) -> None:
    """`--corpus` names a known corpus or a folder; anything else exits 2 with one line saying which exist."""
    import pytest

    from bench.runners import bounds, checkpoint, jump_gates

    for study in (bounds, jump_gates):
        with pytest.raises(SystemExit) as stopped:
            study.main(["--corpus", "no-such-corpus"])
        last = capsys.readouterr().err.strip().splitlines()[-1]
        assert stopped.value.code == 2 and "no-such-corpus" in last and "claude-entire" in last
    with pytest.raises(SystemExit) as stopped:
        checkpoint.main(["no-such-corpus"])
    assert stopped.value.code == 2 and "no-such-corpus" in capsys.readouterr().err.strip().splitlines()[-1]
