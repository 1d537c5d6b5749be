"""Outputs that repeat a text the agent wrote: a plan printed back on approval is a view of the plan file."""

from __future__ import annotations

from typing import Any

from deepmem.compressors.capture import shows_file_lines
from deepmem.toolcalls.echoes import echoes_input, repeated_file
from deepmem.toolcalls.edits import edited_text
from deepmem.toolcalls.touches import touches
from deepmem.transform.facts import FactsBuilder
from deepmem.types import Message

PLAN_PATH = "/home/u/.claude/plans/plan.md"
STEPS = [f"{n}. Move the dispatch of task {n} into scripts/dispatch_{n}.sh" for n in range(1, 30)]
PLAN = "# Plan\n\n## Context\n\nTwo issues with the collab skill.\n\n## Steps\n\n" + "\n".join(STEPS) + "\n"


def call(index: int, tool: str, output: str, **inputs: Any) -> dict[str, Any]:
    """A completed tool part."""
    state = {"status": "completed", "input": inputs, "output": output, "title": "", "metadata": {}}
    return {"id": f"prt_{index:04d}", "type": "tool", "tool": tool, "callID": f"call_{index}", "state": state}


def approval(index: int, plan: str) -> dict[str, Any]:
    """A plan-approval tool (no file in its input) that prints the plan back and names where it is saved."""
    return call(index, "exitplanmode", f"User has approved your plan.\n\nYour plan has been saved to: {PLAN_PATH}\n\n## Approved Plan:\n{plan}", plan=plan)


def history(parts: list[dict[str, Any]]) -> list[Message]:
    """One assistant message per part."""
    return [{"info": {"id": f"msg_{n:03d}", "role": "assistant"}, "parts": [part]} for n, part in enumerate(parts)]


def test_a_tool_printing_back_the_text_its_input_passed_gets_a_file_views_capture_cap() -> None:
    assert echoes_input(approval(1, PLAN))
    assert shows_file_lines(approval(1, PLAN))
    assert not echoes_input(call(2, "exitplanmode", "Approved.", plan=PLAN))
    assert not echoes_input(call(3, "question", "yes", question="Go on?"))
    assert not echoes_input(call(4, "bash", PLAN, command=f"cat {PLAN_PATH}"))


def test_an_edit_of_a_file_written_whole_keeps_its_text_current() -> None:
    assert edited_text(PLAN, {"oldString": "# Plan", "newString": "# Plan B"}) == PLAN.replace("# Plan", "# Plan B", 1)
    assert edited_text(PLAN, {"edits": [{"oldString": "task 1 ", "newString": "task one "}]}) == PLAN.replace("task 1 ", "task one ")
    assert edited_text(PLAN, {"oldString": "not in the plan", "newString": "x"}) is None
    edit = call(2, "edit", "Edited.", filePath=PLAN_PATH, oldString="## Steps", newString="## Tasks")
    assert touches(edit, {PLAN_PATH: PLAN}).texts == ((PLAN_PATH, PLAN.replace("## Steps", "## Tasks")),)
    assert touches(edit, {}).texts == ()


def test_an_output_naming_a_file_written_earlier_and_repeating_most_of_it_is_a_view_of_it() -> None:
    tasks = "\n".join(f"Task {n}: rewrite section {n} of the skill as a script" for n in range(6, 30))
    rewritten = PLAN.replace("\n".join(STEPS[5:]), tasks)
    parts = [
        call(1, "write", "Wrote the file.", filePath=PLAN_PATH, content=PLAN),
        call(2, "edit", "Edited.", filePath=PLAN_PATH, oldString="\n".join(STEPS[5:]), newString=tasks),
        approval(3, rewritten),
    ]
    builder = FactsBuilder()
    for message in history(parts):
        builder.add(message)
    assert repeated_file(parts[2], builder.texts) == PLAN_PATH
    assert repeated_file(parts[2], {PLAN_PATH: PLAN}) is None
    assert "prt_0003" in builder.snapshot().working_set
    assert repeated_file(approval(4, "# Another plan\n\n1. Something else entirely, step by step"), builder.texts) is None
    assert repeated_file(call(5, "bash", rewritten, command=f"cat {PLAN_PATH}"), builder.texts) is None
