"""Liveness per view: a view stays whole and in the working set while it is in use, and the
views newer ones superseded go first; runs a later run replaced keep only their status."""

from __future__ import annotations

from deepmem.compressors import status_runs
from deepmem.transform.facts import FactsBuilder
from deepmem.transform.view_uses import ViewUses, quoted_lines
from deepmem.transform.working_set import HOT_STEPS, WorkingSetBuilder
from deepmem.types import Context, Facts, Settings

SOURCE = "\n".join(f"{n}\tresult_{n} = compute_total({n}, factor=3)" for n in range(1, 80))
"""A numbered view of a file, as `read` shows it (every line long enough to be quoted)."""
OTHER = SOURCE.replace("compute_total", "measure_other")


def tool(index: int, name: str, output: str, **inputs: object) -> dict:
    """A completed tool part."""
    state = {"status": "completed", "input": inputs, "output": output, "title": "", "metadata": {}}
    return {"id": f"prt_{index:04d}", "type": "tool", "tool": name, "callID": f"call_{index}", "state": state}


def fold(parts: list[dict | str]) -> WorkingSetBuilder:
    """The working set after a user prompt and one assistant step per part (a string: a new
    request of the user), settled."""
    builder = FactsBuilder()
    builder.add({"info": {"id": "msg_000", "role": "user"}, "parts": [{"id": "prt_u", "type": "text", "text": "go"}]})
    for index, part in enumerate(parts):
        if isinstance(part, str):
            text = {"id": f"prt_u{index}", "type": "text", "text": part}
            builder.add({"info": {"id": f"msg_{index + 1:03d}", "role": "user"}, "parts": [text]})
        else:
            builder.add({"info": {"id": f"msg_{index + 1:03d}", "role": "assistant"}, "parts": [part]})
    builder.working.settle()
    return builder.working


def idle_steps(start: int, count: int) -> list[dict]:
    """Steps that touch no file and quote nothing."""
    return [tool(start + n, "bash", f"tick {n}", command=f"echo {n}") for n in range(count)]


def paged_then_edited(edits: int) -> list[dict]:
    """Two pages of one file, then `edits` edits that quote only the second page."""
    page = "\n".join(OTHER.split("\n")[:30])
    parts = [
        tool(1, "read", page, filePath="app/a.py", offset=200),
        tool(2, "read", "\n".join(SOURCE.split("\n")[:30]), filePath="app/a.py"),
    ]
    quote = "result_5 = compute_total(5, factor=3)"
    parts += [tool(step, "edit", "ok", filePath="app/a.py", oldString=quote, newString=quote) for step in range(3, 3 + edits)]
    return parts


def test_a_view_of_a_file_still_touched_stays_though_nothing_quotes_it() -> None:
    """Two pages of a file the agent keeps editing: both stay whole, the page its edits do not
    quote too (the agent still working on the file may quote it next)."""
    working = fold(paged_then_edited(HOT_STEPS + 2))
    assert {"prt_0001", "prt_0002"} <= working.whole
    assert "prt_0001" not in working.idle


def test_a_view_nothing_used_leaves_once_its_file_is_left_too() -> None:
    """Once the edits stop, the unquoted page leaves the working set `hot` steps after the last
    touch of its file, not `hot` steps after its own last use."""
    edits = HOT_STEPS + 2
    soon = fold(paged_then_edited(edits) + idle_steps(3 + edits, HOT_STEPS - 2))
    assert "prt_0001" not in soon.idle
    working = fold(paged_then_edited(edits) + idle_steps(3 + edits, HOT_STEPS + 2))
    assert "prt_0001" in working.idle and "prt_0001" not in working.whole


def test_a_view_an_edit_changed_leaves_though_its_file_is_still_edited() -> None:
    """An edit changed lines the first view shows, and a page read since is the newest view: what the
    first shows is no longer the file, so it leaves `hot` steps after its last use though the agent
    goes on editing the file; an unchanged page stays (see above)."""
    quote = "result_5 = compute_total(5, factor=3)"
    parts = [tool(1, "read", SOURCE, filePath="app/a.py"),
             tool(2, "edit", "ok", filePath="app/a.py", oldString=quote, newString="result_5 = 0"),
             tool(3, "read", "\n".join(OTHER.split("\n")[:30]), filePath="app/a.py", offset=200)]
    parts += [tool(4 + n, "edit", "ok", filePath="app/a.py", oldString="x", newString="y") for n in range(HOT_STEPS + 2)]
    working = fold(parts)
    assert "prt_0001" in working.uses.changed
    assert "prt_0001" in working.idle and "prt_0001" not in working.whole
    assert "prt_0003" not in working.idle


def test_the_newest_view_of_a_file_being_edited_stays() -> None:
    """Edits for a later request that quote nothing it shows still use the newest view of the
    file they change: it stays in the working set."""
    parts = [tool(1, "read", SOURCE, filePath="app/a.py"), *idle_steps(2, HOT_STEPS + 2), "fix it"]
    parts += [tool(40 + n, "edit", "ok", filePath="app/a.py", oldString="x", newString="y") for n in range(HOT_STEPS + 2)]
    working = fold(parts)
    assert "prt_0001" not in working.idle and "prt_0001" in working.snapshot()


def test_the_newest_view_leaves_once_a_new_request_has_moved_past_it() -> None:
    """A file read for an earlier request and unused since: its newest view leaves `hot` steps
    after its last use once the user asked something else; without a new request it stays."""
    read = tool(1, "read", SOURCE, filePath="app/a.py")
    kept = fold([read, *idle_steps(2, HOT_STEPS + 2)])
    assert "prt_0001" in kept.snapshot() and not kept.idle
    working = fold([read, "now the docs, please", *idle_steps(3, HOT_STEPS + 2)])
    assert "prt_0001" in working.idle
    read_again = fold([read, "now the docs, please", *idle_steps(3, HOT_STEPS + 2),
                       tool(40, "bash", "ok", command="python - <<'EOF'\nresult_7 = compute_total(7, factor=3)\nEOF")])
    assert "prt_0001" not in read_again.idle, "quoted for the new request: in use again"


def test_a_view_quoted_again_comes_back_to_use() -> None:
    """A quote resets the wait: a view quoted just before the last step is still live."""
    parts = [tool(1, "read", SOURCE, filePath="app/a.py"), tool(2, "read", OTHER, filePath="app/b.py")]
    parts += idle_steps(3, HOT_STEPS + 2)
    parts.append(tool(40, "bash", "ok", command="python - <<'EOF'\nresult_7 = compute_total(7, factor=3)\nEOF"))
    working = fold(parts)
    assert working.uses.used["prt_0001"] == working.step
    assert working.uses.used["prt_0002"] == 2


def test_a_file_read_forty_times_keeps_only_its_newest_view() -> None:
    """Forty reads of one file: each shows the one before again, so only the newest is live."""
    parts = [tool(n, "read", SOURCE, filePath="app/a.py") for n in range(1, 41)]
    working = fold(parts)
    assert set(working.uses.superseded) == {f"prt_{n:04d}" for n in range(1, 40)}
    assert working.whole == {"prt_0040"}
    assert working.snapshot() == {"prt_0040"}


def test_the_same_lines_through_read_and_sed_are_one_view() -> None:
    """`read` numbers its lines and `sed -n` prints them bare: the later one still shows the
    earlier one again, so the earlier one goes first."""
    bare = "\n".join(line.split("\t", 1)[1] for line in SOURCE.split("\n"))
    working = fold([
        tool(1, "read", SOURCE, filePath="app/a.py"),
        tool(2, "bash", bare, command="sed -n '1,79p' app/a.py"),
    ])
    assert "prt_0001" in working.uses.superseded
    assert working.whole == {"prt_0002"}


def test_a_view_of_a_file_deleted_or_moved_away_stays_the_newest_view_of_its_path() -> None:
    """The file a view shows was removed (`rm`) or renamed (`mv`): the agent may write it again
    from the view, so it stays in the working set as the newest view of its path, and nothing fails."""
    for command in ("rm app/a.py", "mv app/a.py app/b.py"):
        working = fold([tool(1, "read", SOURCE, filePath="app/a.py"), tool(2, "bash", "", command=command),
                        *idle_steps(3, HOT_STEPS + 2)])
        assert "prt_0001" not in working.uses.superseded, command
        assert "prt_0001" in working.snapshot() and not working.idle, command


def test_a_binary_read_is_a_view_with_no_lines_to_quote() -> None:
    """A binary file's read has no line to quote: it is used when read, and nothing fails."""
    binary = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00"
    working = fold([tool(1, "read", binary, filePath="img/logo.png"), *idle_steps(2, HOT_STEPS + 2)])
    assert working.uses.lines["prt_0001"] == frozenset()
    assert working.uses.used["prt_0001"] == 1
    assert "prt_0001" not in working.whole


def test_a_session_without_edits_keeps_each_file_s_newest_view_in_the_working_set() -> None:
    """No edit at all: the newest view of each file stays in the working set however long
    nothing uses it (the next edit may quote it), though no longer whole."""
    parts = [tool(1, "read", SOURCE, filePath="app/a.py"), tool(2, "read", OTHER, filePath="app/b.py")]
    parts += idle_steps(3, HOT_STEPS + 2)
    working = fold(parts)
    assert not working.edited and not working.idle
    assert working.snapshot() == {"prt_0001", "prt_0002"}
    assert not working.whole


def test_a_quote_spanning_two_views_uses_both() -> None:
    """An edit whose old text runs from the end of one view into the next uses both views."""
    first = "\n".join(SOURCE.split("\n")[:40])
    second = "\n".join(SOURCE.split("\n")[40:])
    spanning = "result_40 = compute_total(40, factor=3)\nresult_41 = compute_total(41, factor=3)"
    parts = [tool(1, "read", first, filePath="app/a.py"), tool(2, "read", second, filePath="app/a.py", offset=41)]
    parts += idle_steps(3, 5)
    parts.append(tool(9, "edit", "ok", filePath="app/a.py", oldString=spanning, newString="x = 1"))
    working = fold(parts)
    assert working.uses.used["prt_0001"] == working.uses.used["prt_0002"] == working.step
    assert set(working.uses.changed) == {"prt_0001", "prt_0002"}


def test_quoted_lines_take_a_patch_line_without_its_sign() -> None:
    """A line of a patch is quoted with and without its `+` or `-`."""
    lines = quoted_lines({"patch": "-    result_1 = compute_total(1, factor=3)\n+    result_1 = 0"})
    assert "result_1 = compute_total(1, factor=3)" in lines


def test_a_view_no_longer_in_use_is_not_counted_used_by_what_it_does_not_show() -> None:
    """A quote of lines a view does not show leaves it idle."""
    uses = ViewUses()
    uses.add_view("prt_a", SOURCE, 1, ())
    assert uses.quote({"oldString": "nothing like any line of the view"}, 5) == set()
    assert uses.used["prt_a"] == 1, "still its read step"


def test_a_test_run_a_later_run_replaced_keeps_its_failures_and_summary() -> None:
    """The older of two runs of one test command: its failures, its summary and its last line stay."""
    run = "\n".join([*(f"tests/test_a.py::test_{n} PASSED" for n in range(60)),
                     "FAILED tests/test_a.py::test_x - AssertionError: boom", "===== 1 failed, 60 passed in 2.00s ====="])
    builder = fold([tool(1, "bash", run, command="pytest -q"), tool(2, "bash", run.replace("1 failed", "2 failed"), command="pytest -q")])
    assert builder.replaced == {"prt_0001"}
    facts = Facts(replaced_runs=frozenset(builder.replaced))
    result = status_runs.compress(tool(1, "bash", run, command="pytest -q"), Context(age=10, step=1, tier="low", settings=Settings(), facts=facts))
    assert result is not None
    kept = result.part["state"]["output"]
    assert "FAILED tests/test_a.py::test_x - AssertionError: boom" in kept
    assert "===== 1 failed, 60 passed in 2.00s =====" in kept
    assert "test_0 PASSED" not in kept


def test_a_run_without_a_test_summary_is_left_to_the_command_compressor() -> None:
    """A script's prints are not a status: the status compressor leaves them."""
    prints = "\n".join(f"value {n}" for n in range(100))
    facts = Facts(replaced_runs=frozenset({"prt_0001"}))
    assert status_runs.compress(tool(1, "bash", prints, command="python x.py"), Context(age=10, step=1, tier="low", settings=Settings(), facts=facts)) is None
