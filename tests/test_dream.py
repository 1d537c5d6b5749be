"""/dream, /distill and the schedule that runs them after N compactions."""

from __future__ import annotations

from pathlib import Path

import orjson

from deepmem.checkpoints.api import compact
from deepmem.checkpoints.distill import command_shape, recurring_sequences
from deepmem.checkpoints.schedule import EVERY, load_schedule
from deepmem.checkpoints.slash import SLASH_COMMANDS
from deepmem.cli import main
from deepmem.memory import api as memory
from deepmem.project.folder import Project

from .conftest import FIXTURES
from .secret_formats import FORMATS

MESSAGES = orjson.loads((FIXTURES / "sessions" / "django-15499.json").read_bytes())["messages"]


def session(*texts: str, commands: tuple[str, ...] = ()) -> list[dict]:
    """A small session: one user request, then one assistant message per text and per command."""
    messages = [{"info": {"role": "user", "id": "m0"}, "parts": [{"type": "text", "text": "Fix the importer."}]}]
    for text in texts:
        messages.append({"info": {"role": "assistant", "id": "a"}, "parts": [{"type": "text", "text": text}]})
    for command in commands:
        state = {"status": "completed", "input": {"command": command}, "output": "", "metadata": {"exit": 0}}
        messages.append({"info": {"role": "assistant", "id": "b"}, "parts": [{"type": "tool", "tool": "bash", "state": state}]})
    return messages


def test_dream_folds_checkpoint_candidates_and_notes_and_is_idempotent(tmp_path: Path) -> None:
    """Checkpoint candidates go to notes.md; dream moves them and other notes into MEMORY.md once."""
    messages = session("I'll use orjson for the encoder.", "Let me try something.", commands=("pip install orjson",))
    messages[0]["parts"][0]["text"] = "Fix the importer. We must never edit the vendored files."
    compact(Project.load(tmp_path), "ses_a", messages)
    assert {(note["type"], note["text"]) for note in memory.notes(tmp_path)} == {
        ("constraint", "We must never edit the vendored files."), ("decision", "I'll use orjson for the encoder.")}
    memory.add_note(Project.load(tmp_path), "gotcha: the importer reads latin-1 files", "nudge")
    first = SLASH_COMMANDS["dream"](Project.load(tmp_path), "ses_a", [], "")
    assert first.startswith("dream: 3 new memories")
    texts = {(entry.type, entry.text) for entry in memory.entries(tmp_path, "project")}
    assert ("decision", "I'll use orjson for the encoder.") in texts
    assert ("constraint", "We must never edit the vendored files.") in texts
    assert any("latin-1" in text for _, text in texts)
    assert memory.notes(tmp_path) == []
    before = (tmp_path / ".deep-memory" / "MEMORY.md").read_bytes()
    assert SLASH_COMMANDS["dream"](Project.load(tmp_path), "ses_a", [], "").startswith("dream: 0 new memories")
    assert (tmp_path / ".deep-memory" / "MEMORY.md").read_bytes() == before
    assert load_schedule(tmp_path)["jobs"]["dream"]["last_result"].startswith("dream: 0 new")


def test_command_shapes() -> None:
    """Commands reduce to what repeats: program, subcommand, `-i`, scripts."""
    assert command_shape("cd /testbed && python3 reproduce_issue.py") == "python <script>"
    assert command_shape("python -m pytest tests/x.py -q") == "python -m pytest"
    assert command_shape("sed -i 's/a/b/' f.py") == "sed -i"
    assert command_shape("git diff HEAD") == "git diff"
    assert command_shape("cat <<'EOF' > fix.py") == "cat > file"


def test_distill_writes_skill_candidates_where_opencode_loads_them(tmp_path: Path) -> None:
    """The same edit-run-diff sequence in three sessions becomes one candidate under .opencode/skills/."""
    loop = ("sed -i 's/a/b/' src/x.py", "python3 reproduce.py", "git diff")
    compact(Project.load(tmp_path), "ses_a", session(commands=("ls", *loop)))
    compact(Project.load(tmp_path), "ses_b", session(commands=(*loop, "make docs")))
    assert SLASH_COMMANDS["distill"](Project.load(tmp_path), "ses_b", [], "").startswith("distill: no new skill candidates")
    compact(Project.load(tmp_path), "ses_c", session(commands=loop))
    line = SLASH_COMMANDS["distill"](Project.load(tmp_path), "ses_c", [], "")
    name = "sed-i-then-python-script-then-git-diff"
    assert line == f"distill: 1 skill candidates in .opencode/skills/: {name}"
    path = tmp_path / ".opencode" / "skills" / name / "SKILL.md"
    skill = path.read_text()
    assert skill.startswith(f"---\nname: {name}\ndescription: Candidate skill")
    assert "seen in 3 sessions" in skill and "status: candidate" in skill and "python3 reproduce.py" in skill
    assert SLASH_COMMANDS["distill"](Project.load(tmp_path), "ses_c", [], "") == line, "its own unedited file is refreshed"
    path.write_text(skill + "\nMy own note.\n")
    assert "left alone (edited or not written by deepmem): " + name in SLASH_COMMANDS["distill"](Project.load(tmp_path), "ses_c", [], "")
    assert path.read_text().endswith("My own note.\n")


def test_no_recurring_sequence_in_one_session() -> None:
    """A sequence repeated inside one session only is not a cross-session workflow."""
    calls = [(command_shape(c), c) for c in ("sed -i x f", "python3 r.py", "git diff") * 3]
    assert recurring_sequences([calls]) == []


def test_schedule_runs_jobs_after_n_compactions(tmp_path: Path) -> None:
    """Every EVERY["dream"] compactions /dream runs by itself and the counter restarts."""
    results = [compact(Project.load(tmp_path), f"ses_{i}", MESSAGES[:9])["scheduled"] for i in range(EVERY["dream"])]
    assert results[:-1] == [[]] * (EVERY["dream"] - 1)
    assert len(results[-1]) == 1 and results[-1][0].startswith("dream: ")
    jobs = load_schedule(tmp_path)["jobs"]
    assert jobs["dream"]["since"] == 0 and jobs["dream"]["last_run"]
    assert jobs["distill"]["since"] == EVERY["dream"]


def test_corrupt_schedule_is_kept_aside_and_starts_fresh(tmp_path: Path) -> None:
    """An unreadable .schedule.json is kept as .schedule.json.bad with a message; wrong types are reset."""
    (tmp_path / ".deep-memory").mkdir()
    (tmp_path / ".deep-memory" / ".schedule.json").write_text("{not json")
    assert compact(Project.load(tmp_path), "ses_a", MESSAGES[:9])["scheduled"] == [
        ".schedule.json was unreadable: kept as .schedule.json.bad, counting starts afresh"]
    assert (tmp_path / ".deep-memory" / ".schedule.json.bad").read_text() == "{not json"
    assert load_schedule(tmp_path)["jobs"]["dream"]["since"] == 1
    (tmp_path / ".deep-memory" / ".schedule.json").write_text('{"jobs": {"dream": {"since": "x", "every": true}}}')
    assert compact(Project.load(tmp_path), "ses_b", MESSAGES[:9])["scheduled"] == []
    assert load_schedule(tmp_path)["jobs"]["dream"] | {"last_run": None} == {
        "every": EVERY["dream"], "since": 1, "last_run": None, "last_result": None}


def test_cli_dream_and_distill(tmp_path: Path, capsys) -> None:
    """`deepmem dream` and `deepmem distill` print the same line as the slash commands."""
    compact(Project.load(tmp_path), "ses_a", session("I'll use orjson for the encoder.", commands=("pip install orjson",)))
    assert main(["dream", "--root", str(tmp_path)]) == 0
    assert capsys.readouterr().out.startswith("dream: 1 new memories")
    assert main(["distill", "--root", str(tmp_path)]) == 0
    assert capsys.readouterr().out == "distill: no new skill candidates (a workflow must recur in 3 sessions)\n"


def test_a_skill_example_never_shows_a_secret_cut_short(tmp_path: Path) -> None:
    """Raw transcripts keep exact commands; a token that the example's clip would cut is redacted first."""
    token = dict((row[0], row[2]) for row in FORMATS)["github-classic"]
    loop = ("sed -i 's/a/b/' src/x.py", f"python3 reproduce.py --pad {'x' * 240} --token {token}", "git diff")
    for sid in ("ses_a", "ses_b", "ses_c"):
        compact(Project.load(tmp_path), sid, session(commands=loop))
    assert SLASH_COMMANDS["distill"](Project.load(tmp_path), "ses_c", [], "").startswith("distill: 1 skill")
    skill = next((tmp_path / ".opencode" / "skills").glob("*/SKILL.md")).read_text()
    assert "--token [REDACTED:github-token" in skill and token[:12] not in skill
