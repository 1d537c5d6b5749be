"""What a request gains from deepmem (`deepmem.transform.additions`): the resume rule, the blocks a new session gets, the bill."""

from __future__ import annotations

from pathlib import Path

from deepmem.bridge.engine import Engine
from deepmem.checkpoints.api import compact
from deepmem.project.folder import Project
from deepmem.replay.loop import Deepmem, Uncompressed, replay_session
from deepmem.transform.additions import Additions, checkpoint_names, continues, first_request, specific_names
from deepmem.types import Settings

CHECKPOINT = """# Checkpoint

Session `ses_1` · 15 steps

## Task overview
> fix `ValueError` in the loader

## Files modified
- `pkg/loader.py` — edited ×2 (steps 3–9) · `load_config`, `ValueError`
- `reproduce_issue.py` — written ×1 (steps 2–2)

## Critical context
- command `pytest tests/test_loader.py` ×1
"""
EARLIER = """# Checkpoint

## Files modified
- `reproduce_issue.py` — written ×1 (steps 1–1) · `ValueError`
"""


class Characters:
    """A token counter that counts four characters as a token."""

    def count_many(self, units: list[str]) -> list[int]:
        """Tokens of each unit."""
        return [len(unit) // 4 for unit in units]


def message(role: str, number: int, text: str) -> dict:
    """One message of session `s` with one text part."""
    info = {"id": f"msg_{number}", "sessionID": "s", "role": role, "time": {"created": 1_763_600_000_000 + number}}
    return {"info": info, "parts": [{"id": f"prt_{number}", "sessionID": "s", "messageID": info["id"], "type": "text",
                                     "text": text}]}


def test_the_names_of_a_checkpoint_are_its_changed_files_and_their_code_names() -> None:
    names = checkpoint_names(CHECKPOINT)
    assert names["loader.py"] == names["pkg/loader.py"] == "pkg/loader.py"
    assert {"load_config", "ValueError", "reproduce_issue.py"} <= set(names.values())
    assert "ses_1" not in names and "pytest tests/test_loader.py" not in names  # the session's id, a command


def test_only_names_no_earlier_checkpoint_shows_say_a_session_continues_it() -> None:
    specific = set(specific_names(CHECKPOINT, [EARLIER]).values())
    assert specific == {"pkg/loader.py", "load_config"}
    assert continues(CHECKPOINT, [EARLIER], "load_config still fails on an empty file")
    assert continues(CHECKPOINT, [EARLIER], "look at loader.py again")
    assert not continues(CHECKPOINT, [EARLIER], "reproduce_issue.py raises ValueError")  # every session's names
    assert not continues(CHECKPOINT, [EARLIER], "loader.py and load_config", least=3)
    assert not continues(CHECKPOINT, [], "")


def test_a_project_with_an_empty_memory_gives_a_new_session_no_block(tmp_path: Path) -> None:
    engine = Engine(Project.load(tmp_path))
    assert engine.injection.start_block("s", "fix the loader") == ""


def test_a_week_old_checkpoint_of_other_work_is_not_resumed(tmp_path: Path) -> None:
    """A checkpoint of work on another branch, days before: a first request that names none of it gets no resume."""
    project = Project.load(tmp_path)
    old = [message("user", 1, "Rename pkg/loader.py's load_config"), message("assistant", 2, "Renamed.")]
    compact(project, "ses_old", old)
    engine = Engine(project)
    assert "<deepmem-resume>" not in engine.injection.start_block("s", "Add a dark mode toggle to settings.html")


def test_a_session_of_one_request_pays_for_the_tool_schemas_and_nothing_else(tmp_path: Path) -> None:
    """Empty memory, one request: deepmem's requests carry exactly its tool schemas more than none."""
    messages = [message("user", 1, "What does load_config do?"), message("assistant", 2, "It reads the file.")]
    assert Engine(Project.load(tmp_path)).injection.start_block("s", first_request(messages)) == ""
    additions = Additions(tools=284)
    meters = replay_session(messages, [Uncompressed(), Deepmem(Settings(), additions=additions)], Characters(), 7_018)
    assert meters["deepmem"].steps == meters["none"].steps == 1
    assert meters["deepmem"].frame_tokens - meters["none"].frame_tokens == additions.frame == 284


def test_a_session_of_user_text_only_has_a_first_request_and_no_bill(tmp_path: Path) -> None:
    messages = [message("user", 1, "  "), message("user", 2, "Fix the loader."), message("user", 3, "Please.")]
    assert first_request(messages) == "Fix the loader."
    assert first_request([message("user", 1, " ")]) == ""
    meters = replay_session(messages, [Uncompressed(), Deepmem(Settings(), additions=Additions(tools=284))], Characters())
    assert meters["deepmem"].steps == 0 and meters["deepmem"].cost() == 0.0
