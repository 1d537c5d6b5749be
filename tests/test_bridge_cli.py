"""`deepmem init`, `doctor` and `stats`: install, idempotence, uninstall, reports, errors."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from deepmem import __version__
from deepmem.cli import main

from .conftest import REPO

INSTALLED = [
    ".opencode/plugin/deepmem.js",
    ".opencode/plugin/deepmem.json",
    ".opencode/command/checkpoint.md",
    ".opencode/command/dream.md",
    ".opencode/command/distill.md",
]


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_init_installs_the_plugin_pins_the_interpreter_and_is_idempotent(tmp_path: Path, capsys) -> None:
    assert main(["init", "--root", str(tmp_path)]) == 0
    for relative in INSTALLED:
        assert (tmp_path / relative).is_file(), relative
    plugin = (tmp_path / ".opencode/plugin/deepmem.js").read_bytes()
    assert plugin == (REPO / "deepmem/plugin/deepmem.js").read_bytes()
    assert f'const VERSION = "{__version__}"'.encode() in plugin
    sidecar = json.loads((tmp_path / ".opencode/plugin/deepmem.json").read_text())
    assert sidecar == {"python": sys.executable, "version": __version__}
    ignore = (tmp_path / ".deep-memory/.gitignore").read_text()
    for entry in ("sessions/", "ccr/", "index/", "logs/"):
        assert entry in ignore.splitlines()
    assert "MEMORY.md" not in ignore.splitlines()
    first = snapshot(tmp_path)
    capsys.readouterr()
    assert main(["init", "--root", str(tmp_path)]) == 0
    assert snapshot(tmp_path) == first
    assert "installed " not in capsys.readouterr().out


def test_uninstall_removes_only_what_init_installed(tmp_path: Path) -> None:
    other = tmp_path / ".opencode/plugin/other.js"
    other.parent.mkdir(parents=True)
    other.write_text("export const Other = async () => ({})\n")
    assert main(["init", "--root", str(tmp_path)]) == 0
    (tmp_path / ".deep-memory/MEMORY.md").write_text("# memory\n")
    assert main(["init", "--uninstall", "--root", str(tmp_path)]) == 0
    assert not any((tmp_path / relative).exists() for relative in INSTALLED)
    assert other.is_file() and (tmp_path / ".deep-memory/MEMORY.md").is_file()


def test_init_global_uses_the_opencode_config_dir(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("OPENCODE_CONFIG_DIR", str(tmp_path / "config"))
    assert main(["init", "--global"]) == 0
    assert (tmp_path / "config/plugin/deepmem.js").is_file()
    assert (tmp_path / "config/command/dream.md").is_file()


def test_init_on_a_missing_root_is_a_one_line_error(tmp_path: Path, capsys) -> None:
    assert main(["init", "--root", str(tmp_path / "absent")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("deepmem: error: ") and err.count("\n") == 1
    assert not (tmp_path / "absent").exists()


def test_doctor_reports_install_versions_and_a_live_engine(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("OPENCODE_CONFIG_DIR", str(tmp_path / "global-config"))
    assert main(["init", "--root", str(tmp_path)]) == 0
    capsys.readouterr()
    assert main(["doctor", "--root", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"project: plugin {__version__}" in out and "— ok" in out
    assert "global: plugin not installed" in out
    assert "engine: answers" in out
    assert f"key: {Path(os.environ['XDG_DATA_HOME']) / 'deepmem' / 'key'} — " in out


def test_doctor_flags_an_outdated_plugin(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("OPENCODE_CONFIG_DIR", str(tmp_path / "global-config"))
    assert main(["init", "--root", str(tmp_path)]) == 0
    plugin = tmp_path / ".opencode/plugin/deepmem.js"
    plugin.write_text(plugin.read_text().replace(f'const VERSION = "{__version__}"', 'const VERSION = "0.0.1"'))
    capsys.readouterr()
    main(["doctor", "--root", str(tmp_path)])
    assert "MISMATCH" in capsys.readouterr().out


def test_stats_reads_a_record_from_before_the_bills(tmp_path: Path, capsys) -> None:
    """A stats.json written before the two bills were kept reads as it did, its bills shown as '-'."""
    record = {"session": "ses_a", "step": 12, "parts": 40, "compressed": 9, "tokens_before": 20000, "tokens_after": 5000}
    folder = tmp_path / ".deep-memory/sessions/ses_a"
    folder.mkdir(parents=True)
    (folder / "stats.json").write_text(json.dumps(record))
    assert main(["stats", "--root", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("ses_a"))
    assert "75.0%" in row and row.split()[-3:] == ["-", "-", "-"] and "total (1 sessions)" in out
    assert main(["stats", "--json", "--root", str(tmp_path)]) == 0
    assert json.loads(capsys.readouterr().out) == {**record, "cost_with": 0.0, "cost_without": 0.0}


def test_stats_shows_both_bills(tmp_path: Path, capsys) -> None:
    """What each session cost with deepmem and would have cost without, and the ratio; the total sums them."""
    for session, with_, without in (("ses_a", 0.9, 1.0), ("ses_b", 2.1, 2.0)):
        folder = tmp_path / ".deep-memory/sessions" / session
        folder.mkdir(parents=True)
        record = {"session": session, "step": 3, "cost_with": with_, "cost_without": without}
        (folder / "stats.json").write_text(json.dumps(record))
    assert main(["stats", "--root", str(tmp_path)]) == 0
    rows = {line.split()[0]: line.split()[-3:] for line in capsys.readouterr().out.splitlines() if line.startswith(("ses_", "total"))}
    assert rows["ses_a"] == ["0.90", "1.00", "0.90×"]
    assert rows["ses_b"] == ["2.10", "2.00", "1.05×"]
    assert rows["total"] == ["3.00", "3.00", "1.00×"]


@pytest.mark.parametrize("content", ["{not json", "[]"])
def test_stats_on_a_damaged_record_is_a_one_line_error(tmp_path: Path, capsys, content: str) -> None:
    folder = tmp_path / ".deep-memory/sessions/ses_b"
    folder.mkdir(parents=True)
    (folder / "stats.json").write_text(content)
    assert main(["stats", "--root", str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith("deepmem: error: ")
