"""The working set and next-step support: what the agent still works on keeps its text.

Support is measured on real sessions (the evidence fixtures cut from the corpus) and the
OpenCode fixture sessions, step by step as the agent saw them, and held against a floor.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from deepmem.facts import FactsBuilder
from deepmem.pipeline import apply_transform, plan_transform
from deepmem.sessionio import read_session
from deepmem.support import quoted_lines, sed_patterns, step_support
from deepmem.tokens import estimate_tokens
from deepmem.types import Settings
from deepmem.working_set import FILE_TOKENS, is_vendored

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SESSIONS = sorted((FIXTURES / "evidence" / "sessions").glob("*.json")) + sorted(
    (FIXTURES / "sessions").glob("opencode-*.json")
)
NUMBERED = "\n".join(f"{n}: value_{n} = compute_value({n}, scale=2)" for n in range(1, 300))


def tool(index: int, name: str, output: str, **inputs: object) -> dict:
    return {
        "id": f"prt_{index:04d}",
        "type": "tool",
        "tool": name,
        "callID": f"call_{index}",
        "state": {"status": "completed", "input": inputs, "output": output, "title": "", "metadata": {}},
    }


def session(parts: list[dict], prompt: str = "fix it") -> list[dict]:
    """A user prompt, then one assistant message per part."""
    messages = [{"info": {"id": "msg_000", "role": "user"}, "parts": [{"id": "prt_u", "type": "text", "text": prompt}]}]
    messages += [{"info": {"id": f"msg_{i + 1:03d}", "role": "assistant"}, "parts": [part]} for i, part in enumerate(parts)]
    return messages


def working_set(messages: list[dict]) -> frozenset[str]:
    builder = FactsBuilder()
    for message in messages:
        builder.add(message)
    return builder.snapshot().working_set


def test_the_latest_read_of_each_project_file_is_in_the_working_set() -> None:
    parts = [
        tool(1, "read", NUMBERED, filePath="/p/app/a.py"),
        tool(2, "bash", NUMBERED, command="cat ./app/a.py"),
        tool(3, "read", NUMBERED, filePath="/p/app/b.py"),
        tool(4, "read", NUMBERED, filePath="/p/node_modules/x/index.js"),
        tool(5, "bash", NUMBERED, command="sed -n 1,80p /p/.venv/lib/site-packages/y.py"),
    ]
    assert working_set(session(parts)) == {"prt_0002", "prt_0003"}


def test_an_edited_file_keeps_its_older_views_an_unedited_one_only_its_latest() -> None:
    """The agent quotes lines of every page of a file it is changing; of a file it only reads, the latest view."""
    small = "\n".join(NUMBERED.split("\n")[:20])
    parts = [
        tool(1, "read", small, filePath="/p/app/a.py"),
        tool(2, "read", small, filePath="/p/app/a.py", offset=100),
        tool(3, "bash", small, command="sed -n 1,20p app/b.py"),
        tool(4, "bash", small, command="sed -n 40,60p app/b.py"),
        tool(5, "edit", "ok", filePath="/p/app/a.py", oldString="x", newString="y"),
    ]
    assert working_set(session(parts)) == {"prt_0001", "prt_0002", "prt_0004"}
    parts.append(tool(6, "bash", "", command="sed -i 's/a/b/' app/b.py"))
    assert working_set(session(parts)) == {"prt_0001", "prt_0002", "prt_0003", "prt_0004"}


def test_a_view_of_the_same_range_or_past_the_file_budget_leaves_for_good() -> None:
    small = "\n".join(NUMBERED.split("\n")[:20])
    assert estimate_tokens(NUMBERED) > FILE_TOKENS
    parts = [
        tool(1, "read", NUMBERED, filePath="/p/app/a.py"),
        tool(2, "read", small, filePath="/p/app/a.py", offset=100),
        tool(3, "read", small, filePath="/p/app/a.py", offset=200),
        tool(4, "read", small, filePath="/p/app/a.py", offset=200),
        tool(5, "edit", "ok", filePath="/p/app/a.py", oldString="x", newString="y"),
    ]
    builder = FactsBuilder()
    for message in session(parts):
        builder.add(message)
    assert builder.snapshot().working_set == {"prt_0002", "prt_0004"}


def test_a_vendored_file_the_user_names_joins_the_working_set() -> None:
    parts = [tool(1, "read", NUMBERED, filePath="/p/vendor/lib/client.py")]
    assert working_set(session(parts)) == frozenset()
    assert working_set(session(parts, "the bug is in vendor/lib/client.py")) == {"prt_0001"}


def test_the_latest_run_of_a_repeated_command_is_in_the_working_set() -> None:
    parts = [tool(n, "bash", f"run {n}", command="pytest -q") for n in (1, 2, 3)]
    parts.append(tool(4, "bash", "once", command="ls"))
    assert working_set(session(parts)) == {"prt_0003"}


def test_sessions_without_reads_or_with_only_reads_work() -> None:
    assert working_set(session([{"id": "prt_t", "type": "text", "text": "hello"}])) == frozenset()
    only_reads = [tool(n, "read", NUMBERED, filePath=f"/p/m{n}.py") for n in range(30)]
    messages = session(only_reads)
    plan = plan_transform(messages, Settings())
    assert plan.failures == 0
    assert {edit.part["metadata"]["deepmem"]["by"][-1] for edit in plan.edits} == {"working_outputs"}


@pytest.mark.parametrize("window", [0, 8_000, 1_000_000])
def test_a_working_set_read_keeps_far_more_than_a_read_outside_it(window: int) -> None:
    """At every tier (the window moves the thresholds), the working-set read keeps more lines."""
    filler = [tool(n, "bash", "x" * 40_000, command=f"echo {n}") for n in range(2, 20)]
    inside = session([tool(1, "read", NUMBERED, filePath="/p/app/a.py"), *filler])
    outside = session([tool(1, "read", NUMBERED, filePath="/p/vendor/a.py"), *filler])
    settings = Settings(context_window=window)
    kept = []
    for messages in (inside, outside):
        out = apply_transform(messages, plan_transform(messages, settings))
        kept.append(out[1]["parts"][0]["state"]["output"].count("compute_value"))
    assert kept[0] >= 3 * kept[1] > 0


def test_quoted_lines_come_from_edits_commands_heredocs_and_sed_patterns() -> None:
    earlier = session([tool(1, "read", "def load_settings(path, strict=True):\n    return parse(path)", filePath="a.py")])
    step = {
        "info": {"id": "msg_x", "role": "assistant"},
        "parts": [
            tool(2, "edit", "ok", filePath="a.py", oldString="def load_settings(path, strict=True):\n    x", newString=""),
            tool(3, "bash", "", command="sed -i 's/load_settings(path, strict=True)/load(path)/' a.py"),
            tool(4, "bash", "", command="cat <<'EOF' > b.py\n    return parse(path)\nnot quoted anywhere at all\nEOF"),
        ],
    }
    assert quoted_lines(earlier, step) == [
        "def load_settings(path, strict=True):",
        "load_settings(path, strict=True)",
        "return parse(path)",
    ]
    assert list(sed_patterns(r"sed -i 's|a\.b\/c|d|g' f")) == ["a.b/c"]
    cut = [{**earlier[0]}, {**earlier[1], "parts": [tool(1, "read", "[… cut]", filePath="a.py")]}]
    assert step_support(earlier, earlier, step) == (3, 3)
    assert step_support(earlier, cut, step) == (0, 3)


@pytest.mark.parametrize("path", SESSIONS, ids=lambda path: path.stem)
def test_next_step_support_on_real_and_opencode_sessions(path: Path) -> None:
    """Every step of the session, as it saw its history: ≥ 95% of quoted lines visible."""
    messages = read_session(str(path)).messages
    visible = quoted = 0
    for index, message in enumerate(messages):
        if message["info"]["role"] != "assistant":
            continue
        history = messages[:index]
        seen, total = step_support(history, apply_transform(history, plan_transform(history, Settings())), message)
        visible, quoted = visible + seen, quoted + total
    assert visible >= 0.95 * quoted, f"{visible} of {quoted} quoted lines visible"


def test_vendored_paths() -> None:
    assert is_vendored("/usr/lib/python3.11/json/decoder.py")
    assert is_vendored("web/node_modules/react/index.js")
    assert is_vendored("/env/lib/python3.11/site-packages/requests/api.py")
    assert not is_vendored("app/vendors.py") and not is_vendored("src/venv_tools/x.py")


def read_then(later: dict, steps: int) -> list[dict]:
    """A read at step 1, filler, `later` at step 12, filler up to `steps` steps."""
    short = "\n".join(NUMBERED.split("\n")[:100])
    parts = [tool(1, "read", short, filePath="/p/app/a.py")]
    parts += [{"id": f"prt_f{n}", "type": "text", "text": f"step {n}"} for n in range(2, 12)]
    parts.append(later)
    parts += [{"id": f"prt_g{n}", "type": "text", "text": f"step {n}"} for n in range(13, steps + 1)]
    return session(parts)


def first_read_after_plan(messages: list[dict]) -> str:
    settings = Settings(schedule="fixed")
    return apply_transform(messages, plan_transform(messages, settings))[1]["parts"][0]["state"]["output"]


def test_a_read_superseded_by_a_reread_is_cut_at_a_jump_once_keeping_it_has_cost_the_rewrite() -> None:
    """Little lies between the read and the boundary, so the jump after it left pays for the cut."""
    reread = tool(12, "read", "new content", filePath="/p/app/a.py")
    whole = "\n".join(NUMBERED.split("\n")[:100])
    assert first_read_after_plan(read_then(reread, 23)) == whole
    cut = first_read_after_plan(read_then(reread, 24))
    assert "ccr:" in cut and len(cut) < len(whole) / 3


def test_a_read_whose_file_was_edited_keeps_its_text() -> None:
    edit = tool(12, "edit", "ok", filePath="/p/app/a.py", oldString="x", newString="y")
    whole = "\n".join(NUMBERED.split("\n")[:100])
    assert first_read_after_plan(read_then(edit, 24)) == whole
    assert first_read_after_plan(read_then(edit, 40)) == whole
