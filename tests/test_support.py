"""Next-step support: quoted lines come from earlier tool output, visible ones from what the step saw."""

from __future__ import annotations

import json

from deepmem.replay.support import step_support

OUTPUT = "def mean(values):\n    return sum(values) / len(values) + 1\nshort\n"


def tool(call: str, tool_name: str, arguments: dict, output: str = "") -> dict:
    """A completed tool part."""
    return {
        "type": "tool",
        "tool": tool_name,
        "callID": call,
        "state": {"status": "completed", "input": arguments, "output": output},
    }


def message(role: str, *parts: dict) -> dict:
    """A message with the given parts."""
    return {"info": {"role": role}, "parts": list(parts)}


HISTORY = [
    message("user", {"type": "text", "text": "fix mean"}),
    message("assistant", tool("a", "read", {"filePath": "calc.py"}, OUTPUT)),
]
STEP = message(
    "assistant",
    tool(
        "b",
        "edit",
        {"oldString": "    return sum(values) / len(values) + 1\nshort", "newString": "    return 0"},
    ),
    tool("c", "bash", {"command": "sed -i 's/def mean(values):/def mean(xs):/' calc.py\nline not in any output at all"}),
)


def test_quoted_lines_visible_in_the_raw_history() -> None:
    """Lines of 16+ chars found in earlier output count (edit oldString and a sed pattern); short and unseen lines do not."""
    assert step_support(HISTORY, HISTORY, STEP) == (2, 2)


def test_a_cleared_output_hides_the_quoted_lines() -> None:
    """With the read output replaced, none of the quoted lines is visible."""
    cleared = [HISTORY[0], message("assistant", tool("a", "read", {"filePath": "calc.py"}, "[output cleared]"))]
    assert step_support(HISTORY, cleared, STEP) == (0, 2)


def test_a_step_that_quotes_nothing() -> None:
    """No quoted line: (0, 0)."""
    assert step_support(HISTORY, HISTORY, message("assistant", {"type": "text", "text": "done"})) == (0, 0)


def test_a_code_mode_patch_quotes_what_a_shell_read_showed() -> None:
    """The context lines of a patch that a code-mode script applies are quoted from the `sed -n` view before it."""
    view = tool("a", "exec", {"code": 'await tools.exec_command({cmd: "sed -n \'1,3p\' calc.py"})'}, OUTPUT)
    patch = "*** Begin Patch\n*** Update File: calc.py\n@@\n def mean(values):\n-    return sum(values) / len(values) + 1\n+    return 0\n*** End Patch"
    step = message("assistant", tool("b", "exec", {"code": f"await tools.apply_patch({json.dumps(patch)});"}))
    history = [HISTORY[0], message("assistant", view)]
    assert step_support(history, history, step) == (2, 2)
