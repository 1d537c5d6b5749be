"""The working set and next-step support: what the agent still works on keeps its text.

Support is measured on real sessions (the evidence fixtures cut from the corpus) and the
OpenCode fixture sessions, step by step as the agent saw them, and held against a floor.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deepmem.bill.prices import FAMILIES, PriceModel
from deepmem.compressors.file_reads import file_line_numbers
from deepmem.history import whole_view_tokens
from deepmem.replay.support import quoted_lines, sed_patterns, step_support
from deepmem.tokens import estimate_tokens
from deepmem.transform.facts import FactsBuilder
from deepmem.transform.plan import apply_transform, plan_transform
from deepmem.transform.schedule import session_sizes
from deepmem.transform.working_set import (
    CODE_NAME,
    FILE_TOKENS,
    MIN_CODE_NAME,
    WorkingSetBuilder,
    code_runs,
    is_vendored,
)
from deepmem.types import Settings
from deepmem.vault.ccr import CCRStore
from deepmem.vault.restore import restore_messages
from deepmem.vault.sessionio import read_session

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


def test_a_page_past_its_file_budget_stays_whole_while_its_file_is_worked_on() -> None:
    """Newer pages of a file fill its budget and the older one leaves the working set, yet it is still
    kept whole while the file is hot and room remains: the agent quotes it in its next edits."""
    assert estimate_tokens(NUMBERED) > FILE_TOKENS
    parts = [
        tool(1, "bash", NUMBERED, command="sed -n '1,300p' app/a.py"),
        tool(2, "bash", NUMBERED.replace("value", "total"), command="sed -n '300,600p' app/a.py"),
        tool(3, "edit", "ok", filePath="app/a.py", oldString="x", newString="y"),
    ]
    builder = FactsBuilder()
    for message in session(parts):
        builder.add(message)
    facts = builder.snapshot()
    assert facts.working_set == {"prt_0002"}
    assert facts.whole_views == {"prt_0001", "prt_0002"}


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


BIG = "\n".join(f"{n}: value_{n} = compute_value({n}, scale=2)  # keep" for n in range(1, 700))
"""A whole file read: far over what an output outside the files worked on keeps whole."""


def worked_on(later: list[dict], steps: int) -> list[dict]:
    """A whole-file read at step 1, `later` parts from step 2, filler text up to `steps` steps."""
    parts = [tool(1, "read", BIG, filePath="/p/app/big.py"), *later]
    parts += [{"id": f"prt_f{n}", "type": "text", "text": f"step {n}"} for n in range(len(parts) + 1, steps + 1)]
    return session(parts)


def test_hot_steps_weigh_renting_a_view_against_reading_it_again() -> None:
    assert estimate_tokens(BIG) > 4 * FILE_TOKENS
    assert [FAMILIES[name].rent_steps for name in ("anthropic", "openai", "gemini")] == [13, 10, 4]
    free, nearly = (PriceModel("free", 1.0, 0.0, 1.0, 300), PriceModel("nearly", 1.0, 0.001, 1.0, 300))
    assert free.rent_steps == nearly.rent_steps > 13


def test_a_whole_file_read_stays_whole_while_its_file_is_worked_on_then_is_cut() -> None:
    edit = tool(2, "edit", "ok", filePath="/p/app/big.py", oldString="1: value_1", newString="x")
    assert first_read_after_plan(worked_on([edit], 14)) == BIG
    later = first_read_after_plan(worked_on([edit], 60))
    assert "ccr:" in later and len(later) < len(BIG) / 2


def test_a_file_named_by_the_todo_list_keeps_its_view_whole_longer_than_one_read_once() -> None:
    todo = tool(2, "todowrite", "ok", todos=[{"content": "fix big.py", "status": "pending"}])
    assert first_read_after_plan(worked_on([todo], 14)) == BIG
    assert first_read_after_plan(worked_on([], 14)) != BIG


def test_a_code_name_only_one_file_shows_names_that_file_while_the_item_naming_it_is_open() -> None:
    """`compute_value` is shown by big.py alone: a todo item or a request naming it keeps big.py's
    view whole like its name would; once the item is done, or once another file shows the name
    too, it names nothing."""
    def todo(status: str) -> dict:
        return tool(2, "todowrite", "ok", todos=[{"content": "Make compute_value faster", "status": status}])

    assert first_read_after_plan(worked_on([todo("in_progress")], 14)) == BIG
    assert first_read_after_plan(worked_on([todo("completed")], 14)) != BIG
    asked = worked_on([], 14)
    asked[0]["parts"][0]["text"] = "Why is compute_value slow?"
    assert first_read_after_plan(asked) == BIG
    other = tool(2, "read", "total = compute_value(3, scale=1)", filePath="/p/app/other.py")
    shared = worked_on([other, {**todo("in_progress"), "id": "prt_0003"}], 14)
    assert first_read_after_plan(shared) != BIG


def test_views_kept_whole_fit_in_a_share_of_the_window() -> None:
    messages = worked_on([tool(2, "read", BIG, filePath="/p/app/other.py")], 2)
    builder = FactsBuilder(WorkingSetBuilder(whole=estimate_tokens(BIG) + 10))
    for message in messages:
        builder.add(message)
    facts = builder.snapshot()
    assert facts.whole_views == {"prt_0002"} and {"prt_0001", "prt_0002"} <= facts.working_set
    assert whole_view_tokens(Settings(context_window=200_000)) == 50_000


CLAUDE_PREFIXED = "\n".join(f"{n:>6}→func step{n}() error {{ return nil }} // keep" for n in range(1, 700))
BAD_READS = {
    "claude-prefixes": [tool(1, "read", CLAUDE_PREFIXED, filePath="/p/app/big.go")],
    "no-prefixes": [tool(1, "read", BIG.replace(": ", " "), filePath="/p/app/big.py")],
    "in-pieces": [
        tool(1, "read", BIG, filePath="/p/app/big.py", offset=1, limit=300),
        tool(2, "read", BIG, filePath="/p/app/big.py", offset=301, limit=300),
    ],
    "two-versions": [
        tool(1, "read", BIG, filePath="/p/app/big.py"),
        tool(2, "edit", "ok", filePath="/p/app/big.py", oldString="1: value_1", newString="1: v"),
        tool(3, "read", BIG.replace("1: value_1", "1: v"), filePath="/p/app/big.py"),
    ],
    "minified-one-line": [tool(1, "read", "var a=1;" * 40_000, filePath="/p/app/bundle.min.js")],
    "binary": [tool(1, "read", "\x00\x01\x7fELF\ufffd" * 30_000, filePath="/p/app/blob.bin")],
    "edit-quotes-nothing": [
        tool(1, "read", BIG, filePath="/p/app/big.py"),
        tool(2, "edit", "no match", filePath="/p/app/big.py", oldString="never printed anywhere at all", newString=""),
    ],
}


@pytest.mark.parametrize("name", sorted(BAD_READS))
def test_odd_reads_are_handled_and_restore_exactly(name: str, tmp_path: Path) -> None:
    """Reads of every odd shape, at every step of a long session: no failure, the original back."""
    messages = worked_on(BAD_READS[name], 40)
    for end in (3, 12, 25, 41):
        history = messages[:end]
        plan = plan_transform(history, Settings())
        assert plan.failures == 0
        store = CCRStore(tmp_path)
        store.put_all(plan.originals)
        assert restore_messages(apply_transform(history, plan), store) == history


def test_claude_code_line_prefixes_name_file_lines() -> None:
    lines = CLAUDE_PREFIXED.split("\n")[:3]
    assert file_line_numbers(lines, 40) == [1, 2, 3]


def test_the_schedule_weighs_views_kept_whole_as_staying() -> None:
    """A jump leaves a whole view in place, so the sizes the schedule weighs keep it while the
    jump to a boundary (`tail_steps` later) finds it hot: whole instead of cut, never both."""
    edit = tool(2, "edit", "ok", filePath="/p/app/big.py", oldString="1: value_1", newString="x")
    messages = worked_on([edit], 30)
    prices = FAMILIES["anthropic"]
    sizes = session_sizes(messages, Settings(), prices)
    view = min(estimate_tokens(BIG), whole_view_tokens(Settings()))
    last = 2 + prices.rent_steps - Settings().tail_steps  # the last boundary whose jump still finds it hot
    assert sizes.probed[last] >= view > sizes.probed[last + 1]
    assert all(probed <= tokens for probed, tokens in zip(sizes.probed, sizes.tokens, strict=True))
    again = session_sizes(messages[:20], Settings(), prices)
    assert again.probed == sizes.probed[: len(again.probed)]


def test_the_schedule_weighs_a_page_whole_only_while_the_boundary_s_working_set_holds_it() -> None:
    """A page the next page pushes out of its file's budget may stay whole, but a jump keeps it whole
    only if the working set held it at the boundary, or it was read within the young steps' span
    before the boundary (as the plan does): the sizes weigh it so."""
    page = "\n".join(f"{n}: other_{n} = compute_value({n}, scale=3)  # keep" for n in range(700, 1400))
    edit = tool(2, "edit", "ok", filePath="/p/app/big.py", oldString="1: value_1", newString="x")
    young = Settings().tail_steps
    for at in (3, young + 3):
        filler = [{"id": f"prt_g{n}", "type": "text", "text": f"step {n}"} for n in range(3, at)]
        later = [edit, *filler, tool(at, "read", page, filePath="/p/app/big.py", offset=700)]
        sizes = session_sizes(worked_on(later, 30), Settings(), FAMILIES["anthropic"])
        assert sizes.probed[at - 1] == sizes.tokens[at - 1]
        if at - 1 <= young:
            assert sizes.probed[at] == sizes.tokens[at], "read within the young span before the boundary"
        else:
            assert sizes.probed[at] < sizes.tokens[at] - estimate_tokens(BIG) // 2


def test_a_jump_keeps_a_page_read_within_the_young_span_before_its_boundary_whole() -> None:
    """The next page pushes the whole-file read out of its file's budget at step 3: a jump to step
    4 keeps it whole (the agent paging through a file quotes every page next), a jump to a boundary
    past the young steps' span after the read cuts it."""
    page = "\n".join(f"{n}: other_{n} = compute_value({n}, scale=3)  # keep" for n in range(700, 1400))
    edit = tool(2, "edit", "ok", filePath="/p/app/big.py", oldString="1: value_1", newString="x")
    messages = worked_on([edit, tool(3, "read", page, filePath="/p/app/big.py", offset=700)], 30)
    young = Settings().tail_steps
    for boundary, whole in ((young, True), (young + 2, False)):
        plan = plan_transform(messages, Settings(), prices=FAMILIES["anthropic"], jumps=(0, boundary))
        read = apply_transform(messages, plan)[1]["parts"][0]["state"]["output"]
        assert (read == BIG) is whole, boundary


@given(
    st.from_regex(CODE_NAME, fullmatch=True).filter(lambda word: len(word) >= MIN_CODE_NAME),
    st.text(alphabet=st.sampled_from("abAB_1 .\n-é"), max_size=60),
    st.text(alphabet=st.sampled_from("abAB_1 .\n-é"), max_size=60),
    st.booleans(),
)
def test_a_code_name_occurs_in_an_output_exactly_when_in_its_code_runs(word: str, before: str, after: str, inside: bool) -> None:
    """`code_runs` keeps every place a code name can occur: inside a longer word, across
    underscores, next to non-ASCII letters, or nowhere."""
    output = before + (word if inside else word[: len(word) // 2]) + after
    assert (word in output) == (word in code_runs(output))


@pytest.mark.parametrize("name", ["django-15499.json", "opencode-mailer.json"])
def test_sole_holders_are_counted_as_they_change(name: str) -> None:
    """The files that alone show a code name, kept up to date read by read, are at every message
    the ones a recount over all code names finds."""
    builder, sole = FactsBuilder(), 0
    for message in read_session(str(FIXTURES / "sessions" / name)).messages:
        builder.add(message)
        working = builder.working
        assert set(working.sole_holders) == {next(iter(names)) for names in working.code_names.values() if len(names) == 1}
        sole += len(working.sole_holders)
    assert sole > 0
