"""`deepmem audit` on exported sessions: figures, settings, bad input and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deepmem.cli import main
from deepmem.compressors import REGISTRY

SESSIONS = Path(__file__).resolve().parents[1] / "fixtures" / "sessions"
LONG = SESSIONS / "django-15499.json"
SHORT = SESSIONS / "opencode-demo.json"
EXPORTS = [SESSIONS / f"opencode-{name}.json" for name in ("demo", "inventory", "logging", "mailer")]


def audit_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict, str]:
    """Run `deepmem audit --json ARGS`: (exit code, report, stderr)."""
    code = main(["audit", "--json", *args])
    captured = capsys.readouterr()
    return code, json.loads(captured.out), captured.err


def test_a_long_session_costs_less_and_a_short_one_no_more(capsys, tmp_path) -> None:
    """The 57-step session sends fewer tokens with deepmem (OpenCode's system prompt and tools counted on both sides) and costs less at OpenAI's and Gemini's prices; the
    10-step one costs no more under any price model. At Anthropic's prices the long one's last request jumps
    (every view it kept whole has cooled), a rewrite no later request pays back: it costs at most 5% more."""
    code, report, err = audit_json(capsys, "--export", str(LONG), str(SHORT), "--root", str(tmp_path))
    assert code == 0, err
    long, short = sorted(report["sessions"], key=lambda row: -row["steps"])
    assert long["steps"] == 57
    assert long["tokens_with"] < 0.9 * long["tokens_without"]
    assert long["final_with"] < long["final_without"]
    assert all(long["cost_with"][name] < long["cost_without"][name] for name in ("openai", "gemini"))
    assert long["cost_with"]["anthropic"] < 1.05 * long["cost_without"]["anthropic"]
    assert 0 < long["quoted_visible"] <= long["quoted_lines"]
    assert max(long["saved_by"].values()) > 1000
    assert all(short["cost_with"][name] <= short["cost_without"][name] for name in ("anthropic", "openai", "gemini"))
    assert report["total"]["tokens_without"] == long["tokens_without"] + short["tokens_without"]
    assert report["warnings"] == []
    ratios = sorted(row["cost_with"]["anthropic"] / row["cost_without"]["anthropic"] for row in (long, short))
    spread = report["spread"]["anthropic"]
    assert spread == {
        "sessions": 2, "median": sum(ratios) / 2, "costlier": sum(ratio > 1 for ratio in ratios), "worst": ratios[-1]
    }


def test_the_report_gives_the_typical_session_beside_the_total(capsys, tmp_path) -> None:
    """The table names, per price model, the median session, those costlier than none and the worst."""
    assert main(["audit", "--export", str(SHORT), "--root", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if line.strip().startswith("anthropic"))
    assert "median" in line and "of 1 costlier than none" in line and "worst" in line


def test_the_project_settings_are_used(capsys, tmp_path) -> None:
    """A smaller tail and batch in config.toml make the short session compressible."""
    (tmp_path / ".deep-memory").mkdir()
    (tmp_path / ".deep-memory" / "config.toml").write_text('[compress]\ntail_steps = 1\nbatch_steps = 2\nschedule = "fixed"\n')
    _, report, _ = audit_json(capsys, "--export", str(SHORT), "--root", str(tmp_path))
    row = report["sessions"][0]
    assert row["tokens_with"] < row["tokens_without"]


def test_broken_and_missing_files_are_named_and_skipped(capsys, tmp_path) -> None:
    """Exit 1: each bad file gets a one-line warning, the good one is still reported."""
    broken = tmp_path / "broken.json"
    broken.write_text('{"info": {}, "messages": [')
    missing = tmp_path / "missing.json"
    code, report, err = audit_json(capsys, "--export", str(broken), str(SHORT), str(missing), "--root", str(tmp_path))
    assert code == 1
    assert [row["steps"] for row in report["sessions"]] == [10]
    warnings = err.strip().splitlines()
    assert len(warnings) == 2
    assert str(broken) in warnings[0] and "invalid JSON" in warnings[0]
    assert str(missing) in warnings[1]


def test_nothing_usable_exits_2(capsys, tmp_path) -> None:
    """Only a missing database: exit 2, the path named."""
    code, report, err = audit_json(capsys, "--db", str(tmp_path / "opencode.db"))
    assert code == 2
    assert report["sessions"] == []
    assert "opencode.db: no such database" in err


def test_since_and_limit_choose_by_creation_time(capsys, tmp_path) -> None:
    """--limit keeps the newest sessions; --since after every session leaves none (exit 0)."""
    infos = [json.loads(path.read_text())["info"] for path in EXPORTS]
    files = [str(path) for path in EXPORTS]
    created = {info["id"]: info["time"]["created"] for info in infos}
    _, report, _ = audit_json(capsys, "--export", *files, "--limit", "2", "--root", str(tmp_path))
    assert [row["session"] for row in report["sessions"]] == sorted(created, key=created.get)[-2:]
    code, report, _ = audit_json(capsys, "--export", *files, "--since", "2999-01-01", "--root", str(tmp_path))
    assert (code, report["sessions"]) == (0, [])


def test_a_bad_since_is_a_usage_error(capsys) -> None:
    """argparse rejects it with exit 2."""
    with pytest.raises(SystemExit) as exit_info:
        main(["audit", "--since", "yesterday"])
    assert exit_info.value.code == 2
    assert "YYYY-MM-DD" in capsys.readouterr().err


def test_the_table_names_the_top_compressors(capsys, tmp_path) -> None:
    """The text report has a total row and the compressors that saved the most."""
    assert main(["audit", "--export", str(LONG), "--root", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "total (1 sessions)" in out
    assert "saved most at the last step" in out
    listed = [line.split()[0] for line in out.split("saved most at the last step")[1].splitlines()[1:] if line.strip()]
    assert len(listed) >= 3 and set(listed) <= set(REGISTRY)
