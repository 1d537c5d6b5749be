"""The CLI on files: compress and expand round trips, stats, and one-line errors with exit 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from deepmem.bill.prices import FAMILIES
from deepmem.cli import main
from deepmem.markers import marker_keys
from deepmem.transform.plan import apply_transform, plan_transform
from deepmem.types import Settings
from deepmem.vault.sessionio import encode_json, read_session

from .conftest import FIXTURES

DEMO = FIXTURES / "sessions" / "django-15499.json"


def compress_file(source: Path, out: Path, root: Path, *extra: str) -> None:
    """Run `deepmem compress` in-process and check it succeeded."""
    assert main(["compress", str(source), "-o", str(out), "--root", str(root), *extra]) == 0


def test_compress_twice_gives_identical_bytes(tmp_path: Path) -> None:
    """Same file, same bytes."""
    compress_file(DEMO, tmp_path / "a.json", tmp_path)
    compress_file(DEMO, tmp_path / "b.json", tmp_path / "other-root")
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()


def test_compress_weighs_jumps_with_the_prices_cost_sets(tmp_path: Path) -> None:
    """`[cost]` comes first: the Gemini-named session compressed with Anthropic's prices when
    config.toml says so, the same bytes as planning it with them, not those of its own family."""
    configured = tmp_path / "configured"
    (configured / ".deep-memory").mkdir(parents=True)
    (configured / ".deep-memory" / "config.toml").write_text('[cost]\nfamily = "anthropic"\n')
    compress_file(DEMO, tmp_path / "anthropic.json", configured)
    compress_file(DEMO, tmp_path / "own.json", tmp_path / "plain")
    messages = read_session(str(DEMO)).messages
    expected = apply_transform(messages, plan_transform(messages, Settings(), prices=FAMILIES["anthropic"]))
    assert orjson.loads((tmp_path / "anthropic.json").read_bytes())["messages"] == orjson.loads(encode_json(expected))
    assert (tmp_path / "anthropic.json").read_bytes() != (tmp_path / "own.json").read_bytes()


@pytest.mark.parametrize("fixture", ["django-15499.json", "opencode-demo.json", "opencode-transform.json"])
def test_expand_session_gives_back_the_original(fixture: str, tmp_path: Path, monkeypatch) -> None:
    """`expand --session` restores the exact JSON value of the input, in the input's shape."""
    source = FIXTURES / "sessions" / fixture
    monkeypatch.setenv("DEEPMEM_TAIL_STEPS", "1")
    monkeypatch.setenv("DEEPMEM_BATCH_STEPS", "1")
    monkeypatch.setenv("DEEPMEM_SCHEDULE", "fixed")
    compress_file(source, tmp_path / "c.json", tmp_path)
    assert main(["expand", "--session", str(tmp_path / "c.json"), "-o", str(tmp_path / "r.json"), "--root", str(tmp_path)]) == 0
    assert orjson.loads((tmp_path / "r.json").read_bytes()) == orjson.loads(source.read_bytes())
    if fixture.startswith("django"):  # holds old reasoning, so something was cut
        assert b'"deepmem"' in (tmp_path / "c.json").read_bytes()


def test_expand_key_prints_original_and_line_range(tmp_path: Path, capsys, monkeypatch) -> None:
    """A key named by a marker prints its original; --lines prints a slice of it."""
    for name, value in {"TAIL_STEPS": "1", "BATCH_STEPS": "1", "SCHEDULE": "fixed", "TOOL_ERROR_CHARS": "20"}.items():
        monkeypatch.setenv(f"DEEPMEM_{name}", value)
    messages = [
        {"info": {"id": "m1", "role": "user"}, "parts": [{"id": "p1", "type": "text", "text": "go"}]},
        {
            "info": {"id": "m2", "role": "assistant"},
            "parts": [{"id": "p2", "type": "tool", "tool": "bash", "callID": "c1",
                       "state": {"status": "error", "input": {"command": "make"}, "error": "line one\nline two\nline three is the longest of all\nfinal"}}],
        },
        {"info": {"id": "m3", "role": "assistant"}, "parts": [{"id": "p3", "type": "text", "text": "ok"}]},
    ]
    source = tmp_path / "s.json"
    source.write_bytes(encode_json(messages))
    compress_file(source, tmp_path / "c.json", tmp_path)
    error = orjson.loads((tmp_path / "c.json").read_bytes())[1]["parts"][0]["state"]["error"]
    [key] = marker_keys(error)
    capsys.readouterr()
    assert main(["expand", key, "--root", str(tmp_path)]) == 0
    assert capsys.readouterr().out == messages[1]["parts"][0]["state"]["error"]
    assert main(["expand", f"ccr:{key}", "--lines", "2-3", "--root", str(tmp_path)]) == 0
    assert capsys.readouterr().out == "line two\nline three is the longest of all\n"


def test_stats_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--stats prints a row per part kind and a total."""
    compress_file(DEMO, tmp_path / "c.json", tmp_path, "--stats")
    out = capsys.readouterr().out
    assert "tool:bash" in out and "total" in out and "tier" in out


def test_stdin_and_stdout(tmp_path: Path) -> None:
    """`-` reads stdin; without -o the session goes to stdout, same shape."""
    run = subprocess.run(
        [sys.executable, "-m", "deepmem", "compress", "-", "--root", str(tmp_path)],
        input=DEMO.read_bytes(), capture_output=True, check=True,
    )
    out = orjson.loads(run.stdout)
    assert set(out) == set(orjson.loads(DEMO.read_bytes()))


BAD_INPUTS = [
    (b"{not json", "invalid JSON"),
    (b'{"info": {}}', "expected an opencode export"),
    (b'[{"info": {"role": "user"}, "parts": []}, {"info": {"role": "robot"}, "parts": []}]', "message 1"),
    (b'[{"info": {"role": "user"}, "parts": [{"text": "no type"}]}]', "message 0"),
    (b'[{"parts": []}]', "message 0"),
]


@pytest.mark.parametrize(("data", "expected"), BAD_INPUTS)
def test_bad_input_is_one_line_exit_2_and_no_output_file(data: bytes, expected: str, tmp_path: Path) -> None:
    """Invalid JSON or a wrong shape: exit 2, one line naming the problem, no traceback, no file."""
    source = tmp_path / "bad.json"
    source.write_bytes(data)
    out = tmp_path / "out.json"
    run = subprocess.run(
        [sys.executable, "-m", "deepmem", "compress", str(source), "-o", str(out), "--root", str(tmp_path)],
        capture_output=True, text=True,
    )
    assert run.returncode == 2
    assert run.stderr.count("\n") == 1 and expected in run.stderr and "Traceback" not in run.stderr
    assert not out.exists() and not list(tmp_path.glob(".out.json*"))


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["expand", "0" * 32], "unknown CCR key"),
        (["compress", "/nonexistent/session.json"], "cannot read"),
        (["expand"], "needs a KEY"),
        (["expand", "abc", "--lines", "x-y"], "unknown CCR key"),
    ],
)
def test_cli_errors(argv: list[str], expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Unknown keys and unreadable files are one-line errors with exit code 2."""
    assert main([*argv, "--root", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("deepmem: error:") and expected in err and err.count("\n") == 1


def test_unreadable_directory_as_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A directory given as the session file is reported, not a traceback."""
    assert main(["compress", str(tmp_path), "--root", str(tmp_path)]) == 2
    assert "cannot read" in capsys.readouterr().err
