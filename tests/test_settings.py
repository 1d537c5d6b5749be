"""Every setting is checked once at load: one line naming it and its range, exit 2, or defaults in the bridge."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from deepmem.bill.prices import FAMILIES, PriceModel, resolve_prices
from deepmem.cli import main
from deepmem.project.config import CostSettings, config_problem, load_config, memory_dir

from .test_bridge import Bridge, django_messages, steps_of

BAD_ENV = [
    ("DEEPMEM_BATCH_STEPS", "0", "DEEPMEM_BATCH_STEPS='0': batch_steps must be an integer >= 1 and <= 1,000"),
    ("DEEPMEM_TAIL_STEPS", "-1", "DEEPMEM_TAIL_STEPS='-1': tail_steps must be an integer >= 0 and <= 1,000"),
    ("DEEPMEM_CAPTURE_CAP_TOKENS", "lots", "capture_cap_tokens must be an integer >= 0"),
    ("DEEPMEM_SECURITY_REDACT", "maybe", "redact must be true or false (1 or 0)"),
    ("DEEPMEM_LIMITS_LOG_BYTES", "10", "log_bytes must be an integer >= 4,096"),
]
BAD_TOML = [
    ("[compress]\nbatch_steps = 0\n", "[compress] batch_steps must be an integer >= 1 and <= 1,000"),
    ("[compress]\ntail_step = 3\n", "unknown setting [compress] tail_step; known: tail_steps, batch_steps"),
    ("[compres]\ntail_steps = 3\n", "unknown table [compres]; known tables: compress, memory, security, limits"),
    ("[compress]\ntail_steps = [1]\n", "[compress] tail_steps must be an integer >= 0"),
    ("compress = 3\n", "[compress] must be a table"),
    ("[memory]\nmodel = 5\n", "[memory] model must be a string"),
    ("[security]\npatterns = ['(']\n", "[security] patterns: '(' is not a regular expression"),
    ("[compress]\ntier_medium_tokens = 200000\n", "tier_high_tokens must be >= tier_medium_tokens"),
    ("[compress\n", "config.toml: "),
]


@pytest.mark.parametrize(("name", "value", "message"), BAD_ENV)
def test_a_bad_variable_is_one_line_and_exit_2(name: str, value: str, message: str, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(name, value)
    assert main(["memory", "list", "--root", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and err.startswith("deepmem: error: ")


@pytest.mark.parametrize(("text", "message"), BAD_TOML)
def test_a_bad_config_file_is_one_line_and_exit_2(text: str, message: str, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    memory_dir(tmp_path).mkdir()
    (memory_dir(tmp_path) / "config.toml").write_text(text)
    assert main(["stats", "--root", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


def test_good_values_from_both_sources_are_typed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    memory_dir(tmp_path).mkdir()
    (memory_dir(tmp_path) / "config.toml").write_text(
        "[compress]\ntail_steps = 2\n[security]\nredact = false\n[limits]\nsessions_kept = 7\n[memory]\nmodel = 'x'\n")
    monkeypatch.setenv("DEEPMEM_BATCH_STEPS", "3")
    monkeypatch.setenv("DEEPMEM_MEMORY_MODEL", "y")
    config = load_config(tmp_path)
    assert (config.compress.tail_steps, config.compress.batch_steps) == (2, 3)
    assert (config.security.redact, config.limits.sessions_kept, config.memory.model) == (False, 7, "y")


def test_the_bridge_reports_a_bad_setting_once_and_keeps_working_on_defaults(tmp_path: Path) -> None:
    bridge = Bridge(tmp_path, {"DEEPMEM_BATCH_STEPS": "0"})
    try:
        hello = bridge.hello()
        assert hello["ok"] and "batch_steps must be an integer >= 1" in hello["warning"]
        messages = django_messages()
        replies = [bridge.transform("ses_b", messages[:length]) for length in steps_of(messages)]
        assert all(reply["ok"] and "warning" not in reply for reply in replies)
        assert 0 < replies[-1]["boundary"] <= replies[-1]["step"] - 4
    finally:
        assert bridge.close() == 0
    log = (memory_dir(tmp_path) / "logs" / "bridge.log").read_text()
    assert log.count("batch_steps must be") == 1


def resolved(root: Path, family: str) -> PriceModel:
    """The prices a session named by `family` is weighed with under the settings at `root`."""
    named = [{"info": {"role": "assistant", "providerID": family}, "parts": []}]
    return resolve_prices(named, configured=load_config(root).cost.prices)


def test_cost_cache_reads_override_the_familys_way(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`cache_reads` says where the provider reads a cached prefix up to, over the family's way."""
    anthropic = FAMILIES["anthropic"]
    assert resolved(tmp_path, "anthropic") == anthropic
    monkeypatch.setenv("DEEPMEM_COST_CACHE_READS", "prefix")
    assert resolved(tmp_path, "anthropic") == msgspec.structs.replace(anthropic, cached_at_marks=False)
    monkeypatch.setenv("DEEPMEM_COST_CACHE_READS", "marks")
    monkeypatch.setenv("DEEPMEM_COST_INPUT", "2.0")
    priced = resolved(tmp_path, "openai")
    assert priced.cached_at_marks and priced.input == 2.0
    monkeypatch.setenv("DEEPMEM_COST_CACHE_READS", "sometimes")
    assert "cache_reads" in config_problem(tmp_path)


COST_ROWS = {
    "family": (CostSettings(family="deepseek"), CostSettings()),
    "input": (CostSettings(input=2.0), CostSettings()),
    "cache_read": (CostSettings(input=2.0, cache_read=0.5), CostSettings(input=2.0)),
    "cache_write": (CostSettings(input=2.0, cache_write=2.5), CostSettings(input=2.0)),
    "cache_ttl_seconds": (CostSettings(cache_ttl_seconds=60), CostSettings()),
    "cache_reads": (CostSettings(cache_reads="marks"), CostSettings()),
}
"""Per `[cost]` field that names a price: settings that set it, and the same without it."""
NOT_PRICES = {"frame_tokens": "tokens added to every request, billed on both sides by `deepmem audit`"}
"""`[cost]` fields that are no price, with what reads them."""


def test_every_cost_setting_changes_the_prices() -> None:
    """Each `[cost]` price, set, changes the price model the jumps are weighed with: a setting
    accepted but priced nowhere fails here (a new field needs its row, or its reader named)."""
    assert set(COST_ROWS) | set(NOT_PRICES) == {field.name for field in msgspec.structs.fields(CostSettings)}
    fallback = FAMILIES["openai"]
    for name, (with_it, without_it) in COST_ROWS.items():
        assert (with_it.prices(fallback) or fallback) != (without_it.prices(fallback) or fallback), name
