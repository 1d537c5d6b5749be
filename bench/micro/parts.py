"""Generated parts for compressors that the committed sessions never exercise (subagent, skill, system blocks, thinking)."""

from __future__ import annotations

from deepmem.types import Part

REPEAT = 200
"""Body lines of each generated part: the size of a long tool output."""


def tool_part(tool: str, output: str, **arguments: str) -> Part:
    """A completed tool part."""
    return {
        "id": f"prt_micro_{tool}",
        "type": "tool",
        "tool": tool,
        "callID": f"call_{tool}",
        "state": {"status": "completed", "input": arguments, "output": output, "title": tool, "metadata": {}},
    }


def text_part(text: str) -> Part:
    """An assistant text part."""
    return {"id": "prt_micro_text", "type": "text", "text": text}


def subagent_output() -> Part:
    """A `task` result: a header, findings and a tail."""
    body = [f"Checked module_{n}.py: the handler returns early when the cache is cold." for n in range(REPEAT)]
    lines = ["<task_result>", "## Findings", *body, "Root cause: src/cache.py line 41 skips the refresh.", "</task_result>"]
    return tool_part("task", "\n".join(lines), description="find the bug", prompt="look", subagent_type="general")


def skill_output() -> Part:
    """A skill body: frontmatter, rules and prose."""
    body = [f"Step {n}: tag the build, then wait for the pipeline before the next step." for n in range(REPEAT)]
    lines = ["---", "name: release", "description: cut a release", "---", "# Release", "You MUST run the tests.", *body]
    return tool_part("skill", "\n".join(lines), name="release")


def system_block_text() -> Part:
    """Assistant text carrying an injected reminder block."""
    reminder = "\n".join(f"Reminder {n}: the todo list has pending items." for n in range(REPEAT))
    return text_part(f"Working on it.\n<system-reminder>\n{reminder}\n</system-reminder>\nDone.")


def thinking_text() -> Part:
    """Assistant text with an inline thinking block."""
    thoughts = "\n".join(f"Maybe the failure comes from branch {n} of the parser." for n in range(REPEAT))
    return text_part(f"<thinking>\n{thoughts}\n</thinking>\nThe parser needs a guard.")


GENERATED = {
    "subagent": subagent_output,
    "skills": skill_output,
    "system_blocks": system_block_text,
    "thinking": thinking_text,
}
"""Compressor name → a part it shortens."""
