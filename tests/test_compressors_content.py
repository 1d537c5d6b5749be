"""Each content compressor on real output shapes: what it keeps, its marker, and its CCR original."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from deepmem import compressors
from deepmem.compressors import REGISTRY, ROUTES, capture_compressors, compressors_for, route_keys
from deepmem.history import whole_view_tokens
from deepmem.markers import marker_keys, shown_key
from deepmem.text.fields import main_text
from deepmem.tokens import estimate_tokens
from deepmem.toolcalls import kinds
from deepmem.toolcalls.paths import by_file_name
from deepmem.types import Context, Facts, Part, Settings, Tier

from .conftest import FIXTURES

EVIDENCE = FIXTURES / "evidence" / "sessions"


def transform_parts() -> list[Part]:
    """Tool parts of the captured OpenCode transform payload (committed copy)."""
    messages = json.loads((FIXTURES / "sessions" / "opencode-transform.json").read_text())
    return [p for m in messages for p in m["parts"] if p.get("type") == "tool"]


def corpus_part(session: str, part_id: str) -> Part:
    """One part of an evidence session, by id."""
    data = json.loads((EVIDENCE / session).read_text())
    return next(p for m in data["messages"] for p in m["parts"] if p.get("id") == part_id)


def ctx(tier: Tier = "low", step: int = 1, facts: Facts | None = None) -> Context:
    """A compressor context for an old part."""
    return Context(age=1, step=step, tier=tier, settings=Settings(), facts=facts or Facts())


def tool(tool_name: str, output: str, **inputs: object) -> Part:
    """A completed tool part."""
    state = {"status": "completed", "input": inputs, "output": output, "title": "t", "metadata": {}}
    return {
        "id": f"prt_{tool_name}",
        "type": "tool",
        "tool": tool_name,
        "callID": f"call_{tool_name}",
        "state": state,
    }


def originals_restore(part: Part, compressed: Part, result) -> None:
    """The compressed text names a key whose original is the text it replaced."""
    keys = marker_keys(main_text(compressed) or json.dumps(compressed["state"]["input"]))
    stored = {shown_key(o.key): o.text for o in result.originals}
    assert keys and all(k in stored for k in keys)
    before = main_text(part)
    if before is not None and main_text(compressed) != before:
        assert before in stored.values()


def test_read_keeps_header_definitions_and_named_lines() -> None:
    """An OpenCode read: <path> header, definitions and a line named by a later traceback stay."""
    read = next(p for p in transform_parts() if p["tool"] == "read")
    facts = Facts(named_lines=frozenset({("jsonpkg/decoder.py", 355)}))
    result = REGISTRY["file_reads"].compress(read, ctx(facts=facts))
    text = main_text(result.part)
    assert text.startswith("<path>/home/user/demo/jsonpkg/decoder.py</path>")
    assert "class JSONDecodeError(ValueError):" in text
    assert '355:             raise JSONDecodeError("Expecting value", s, err.value) from None' in text
    assert "[… lines " in text and len(text) < len(main_text(read)) / 4
    originals_restore(read, result.part, result)


def test_shell_read_uses_nl_numbers_for_named_lines() -> None:
    """`nl -ba file | sed -n` output: a line named by a later error is found by its number."""
    body = "\n".join(f"{n:6}\tline {n} of the file" for n in range(100, 200))
    part = tool(
        "bash",
        f"<returncode>0</returncode>\n<output>\n{body}\n</output>",
        command="nl -ba pkg/mod.py | sed -n '100,199p'",
    )
    facts = Facts(named_lines=frozenset({("/testbed/pkg/mod.py", 150)}))
    assert compressors_for(part, ctx(facts=facts)) == ("system_blocks", "file_reads", "long_inputs")
    text = main_text(REGISTRY["file_reads"].compress(part, ctx(facts=facts)).part)
    assert "   150\tline 150 of the file" in text
    assert "   149\tline 149" not in text


def test_stale_read_is_marked_and_shortened_harder() -> None:
    """A read of a file edited at a later step says so and keeps fewer lines than a fresh read."""
    read = next(p for p in transform_parts() if p["tool"] == "read")
    facts = Facts(edit_steps=by_file_name({"/home/user/demo/jsonpkg/decoder.py": 7}.items()))
    assert "stale_reads" in compressors_for(read, ctx(step=3, facts=facts))
    assert "stale_reads" not in compressors_for(read, ctx(step=8, facts=facts))
    stale = main_text(REGISTRY["stale_reads"].compress(read, ctx(step=3, facts=facts)).part)
    fresh = main_text(REGISTRY["file_reads"].compress(read, ctx(step=3)).part)
    assert stale.startswith("[deepmem: stale read: this file was edited at step 7")
    assert len(stale) < len(fresh)


def test_command_output_keeps_failing_tests_errors_and_exit_status() -> None:
    """A real pytest run: exit status, FAILED lines, error lines and the summary survive."""
    part = corpus_part("pallets__flask-5014.json", "prt_db073679e3000053")
    original = main_text(part)
    result = REGISTRY["command_output"].compress(part, ctx())
    text = main_text(result.part)
    assert text.startswith("<returncode>")
    failing = [line for line in original.split("\n") if line.startswith("FAILED ")]
    assert failing and all(line[:200] in text for line in failing[:10])
    assert original.rstrip().split("\n")[-2] in text
    assert len(text) < len(original) / 2
    originals_restore(part, result.part, result)


@pytest.mark.parametrize("tier", ["low", "medium", "high"])
def test_search_results_grouped_by_file(tier: Tier) -> None:
    """grep -rn over many files: the first files keep their first matches, the rest are counted."""
    lines = [f"pkg/mod{f}.py:{n}:    def handler_{f}_{n}(self):" for f in range(30) for n in range(1, 9)]
    part = tool("bash", "\n".join(lines), command="grep -rn 'def handler' pkg")
    assert compressors_for(part, ctx(tier))[:2] == ("system_blocks", "search_results")
    text = main_text(REGISTRY["search_results"].compress(part, ctx(tier)).part)
    assert "pkg/mod0.py:1:" in text and "pkg/mod0.py:3:" in text and "pkg/mod0.py:4:" not in text
    assert "[not shown: pkg/mod" in text and "(8)" in text
    assert len(marker_keys(text)) == 1


def test_a_search_of_a_few_megabyte_lines_keeps_every_match_clipped() -> None:
    """`rg` matching minified bundles: four lines of 300K characters, none to cut: each is clipped, the rest counted."""
    lines = [f"dist/bundle{n}.min.js:1:" + f"var a{n}=computeTotal(o,{n});" * 12_000 for n in range(4)]
    part = tool("bash", "\n".join(lines), command="rg -n computeTotal .")
    text = main_text(REGISTRY["search_results"].compress(part, ctx()).part)
    assert len(text) < 2_000
    assert all(f"dist/bundle{n}.min.js:1:var a{n}" in text for n in range(4))
    assert " chars cut · ccr:" in text.splitlines()[-1]


def test_search_over_one_file_names_no_files() -> None:
    """grep -n -A over one file: its numbered match and context lines are never listed as
    files (`1085-    if self.required:` is a line of the file, not a file name)."""
    lines = []
    for n in range(40):
        lines += [f"{100 * n}:    def check_{n}(self, value):", f"{100 * n + 1}-        if self.required:"]
    part = tool("bash", "\n".join(lines), command="grep -n -A1 'def check' django/forms/fields.py")
    text = main_text(REGISTRY["search_results"].compress(part, ctx()).part)
    assert "not shown" not in text
    assert text.startswith("0:    def check_0(self, value):") and text.endswith("3901-        if self.required:")


def test_json_array_stays_valid_json_with_a_counted_marker() -> None:
    """The captured 200-item JSON output: head, tail and a marker item, still parseable."""
    part = next(p for p in transform_parts() if "Emit JSON" in json.dumps(p["state"]["input"]))
    assert compressors_for(part, ctx())[0] == "json_arrays"
    result = REGISTRY["json_arrays"].compress(part, ctx())
    items = orjson.loads(main_text(result.part))
    assert items[0] == {"id": 0, "name": "item0", "ok": True} and items[-1]["id"] == 199
    assert any(isinstance(i, str) and "items cut" in i for i in items)
    assert orjson.loads(result.originals[0].text) == orjson.loads(main_text(part))


def test_json_nested_arrays_over_30_items_are_crushed() -> None:
    """An object holding a 100-item list inside `<output>` tags: the inner list is crushed."""
    body = orjson.dumps([{"rows": list(range(100)), "name": "x"}]).decode()
    part = tool("bash", f"<returncode>0</returncode>\n<output>\n{body}\n</output>", command="cat data.json")
    value = orjson.loads(
        main_text(REGISTRY["json_arrays"].compress(part, ctx()).part)
        .split("<output>\n")[1]
        .split("\n</output>")[0]
    )
    assert value[0]["rows"][:3] == [0, 1, 2] and len(value[0]["rows"]) < 20


def test_truncated_json_array_is_left_to_the_next_compressor() -> None:
    """Output that looks like an array but is cut off is not JSON: no result, the route's next compressor cuts it."""
    part = tool("bash", '[{"id": 1}, {"id": 2}, {"id"', command="curl x")
    assert REGISTRY["json_arrays"].compress(part, ctx()) is None
    assert compressors_for(part, ctx())[:2] == ("json_arrays", "command_output")


def test_subagent_output_keeps_tags_headers_and_tail() -> None:
    """OpenCode task output: the task id, markdown headers, paths and the last lines survive."""
    body = ["task_id: ses_abc (for resuming)", "", "<task_result>", "## Findings"]
    body += [f"Looked at item {n} and it was unremarkable." for n in range(80)]
    body += ["## Conclusion", "The bug is in src/app/parser.py line 40.", "Done.", "</task_result>"]
    part = tool("task", "\n".join(body), description="find the bug", prompt="look", subagent_type="general")
    text = main_text(REGISTRY["subagent"].compress(part, ctx()).part)
    for kept in (
        "task_id: ses_abc (for resuming)",
        "## Findings",
        "## Conclusion",
        "src/app/parser.py",
        "</task_result>",
    ):
        assert kept in text
    assert "item 40 " not in text


def test_skill_output_keeps_frontmatter_rules_and_headers() -> None:
    """Skill text: frontmatter, MUST/NEVER rules and headers stay; plain body lines go."""
    body = [
        "## Skill: release",
        "",
        "---",
        "name: release",
        "description: ship a release",
        "---",
        "# Release",
    ]
    body += [f"Step {n}: do the ordinary thing number {n}." for n in range(60)]
    body += ["You MUST tag the commit.", "NEVER push to main directly.", "## Rollback", "Revert it."]
    part = tool("skill", "\n".join(body), name="release")
    text = main_text(REGISTRY["skills"].compress(part, ctx()).part)
    for kept in ("name: release", "description: ship a release", "You MUST tag", "NEVER push", "## Rollback"):
        assert kept in text
    assert "Step 30:" not in text


def test_prose_keeps_structure_and_decisions() -> None:
    """Assistant prose: fences (their code counted), paths, decisions and list items stay,
    at most the tier's number of items and paragraphs, those holding a decision first."""
    text = (
        "THOUGHT: I looked at the writer. It has many branches that are not relevant here.\n\n"
        "Some filler sentence about nothing in particular. Another one that adds little.\n\n"
        "```python\ndef write(self, table):\n    cols = list(table.columns)\n    return cols\n```\n\n"
        "- first point of the plan\n- second point\n\n"
        "The root cause is that `astropy/io/ascii/html.py` never applies formats. More words follow.\n"
    )
    items = "".join(f"- step {n} of the long plan\n" for n in range(12))
    decision = "I decided to keep the old writer and patch only the formats.\n"
    part = {"id": "prt_t", "type": "text", "text": text + items + decision}
    result = REGISTRY["prose"].compress(part, ctx())
    short = main_text(result.part)
    for kept in (
        "THOUGHT: I looked at the writer.",
        "```python",
        "… (3 code lines)",
        "- second point",
        "astropy/io/ascii/html.py",
        "- step 0 of",
        "I decided to keep the old writer",
    ):
        assert kept in short
    for cut in ("Some filler sentence", "def write(self, table):", "- step 11 of"):
        assert cut not in short
    assert result.originals[0].text == part["text"]
    assert marker_keys(short) == [shown_key(result.originals[0].key)]


def test_prose_keeps_at_most_the_tiers_paragraphs_even_when_each_holds_a_decision() -> None:
    """A debugging monologue whose every paragraph names an error keeps the tier's number of
    them (the first ones), not a sentence of each."""
    paragraphs = [f"Attempt {n} failed because the error {n} came back. More detail follows here." for n in range(20)]
    part = {"id": "prt_m", "type": "text", "text": "\n\n".join(paragraphs)}
    short = main_text(REGISTRY["prose"].compress(part, ctx("low")).part)
    kept = [n for n in range(20) if f"Attempt {n} failed" in short]
    assert kept == list(range(6))


def test_long_inputs_shorten_heredocs_and_edit_strings() -> None:
    """A heredoc command and an edit's strings keep their first and last lines, keys intact."""
    script = "cat <<'EOF' > reproduce.py\n" + "\n".join(f"print({n})" for n in range(80)) + "\nEOF"
    bash = tool("bash", "ok", command=script, description="write script")
    result = REGISTRY["long_inputs"].compress(bash, ctx())
    command = result.part["state"]["input"]["command"]
    assert command.startswith("cat <<'EOF' > reproduce.py") and command.split("\n")[-2] == "EOF"
    assert result.originals[0].text == script
    edit = tool(
        "edit", "Edit applied successfully.", filePath="a.py", oldString="x = 1\n" * 200, newString="y"
    )
    assert compressors_for(edit, ctx()) == ("long_inputs",)
    shortened = REGISTRY["long_inputs"].compress(edit, ctx()).part["state"]["input"]
    assert set(shortened) == {"filePath", "oldString", "newString"} and shortened["newString"] == "y"


def test_duplicate_call_points_to_the_newer_copy() -> None:
    """The older of two identical calls becomes a pointer naming the newer call."""
    read = next(p for p in transform_parts() if p["tool"] == "read")
    facts = Facts(newer_call={read["id"]: "call_newer"})
    assert compressors_for(read, ctx(facts=facts))[0] == "duplicates"
    text = main_text(REGISTRY["duplicates"].compress(read, ctx(facts=facts)).part)
    assert "call_newer" in text and len(marker_keys(text)) == 1


def test_errored_call_input_is_purged_to_its_key() -> None:
    """An errored call's big input becomes a small object naming its CCR key."""
    part = {
        "id": "prt_e",
        "type": "tool",
        "tool": "bash",
        "callID": "c",
        "state": {
            "status": "error",
            "input": {"command": "python - <<'EOF'\n" + "x = 1\n" * 100 + "EOF"},
            "error": "timed out",
        },
    }
    assert compressors_for(part, ctx()) == ("errored_inputs", "tool_errors")
    result = REGISTRY["errored_inputs"].compress(part, ctx())
    purged = result.part["state"]["input"]
    assert purged["purged"] == f"ccr:{shown_key(result.originals[0].key)}"
    assert orjson.loads(result.originals[0].text) == part["state"]["input"]


def test_protected_tool_outputs_are_never_routed() -> None:
    """todowrite, question, memory_* and deep_expand outputs get no output compressor."""
    for name in ("todowrite", "question", "memory_search", "deep_expand", "edit", "write"):
        part = tool(name, "x\n" * 5000)
        assert compressors_for(part, ctx("high")) in ((), ("long_inputs",))


def test_capture_trims_to_the_cap_and_keeps_errors() -> None:
    """A new 40K-token output is cut near the cap, with its error line and both ends."""
    lines = [f"log line {n} with some padding text to make it longer" for n in range(12_000)]
    lines[6_000] = "ValueError: the one line that matters"
    part = tool("bash", "\n".join(lines), command="make")
    result = REGISTRY["capture"].compress(
        part, Context(age=0, step=5, tier="low", settings=Settings(), facts=Facts(), captured=True)
    )
    text = main_text(result.part)
    assert "ValueError: the one line that matters" in text
    assert text.startswith("log line 0 ") and "log line 11999 " in text
    assert len(text) < Settings().capture_command_cap_tokens * 5


def test_capture_keeps_every_file_header_of_a_long_diff() -> None:
    """A `git diff` over the cap keeps the header naming each file it changes, middle files too."""
    files = [f"src/module_{n}.py" for n in range(5)]
    hunks = [
        f"diff --git a/{name} b/{name}\n--- a/{name}\n+++ b/{name}\n@@ -1,40 +1,40 @@\n"
        + "\n".join(f"-    old_value_{n} = compute({n})\n+    new_value_{n} = compute({n}, strict=True)" for n in range(80))
        for name in files
    ]
    context = Context(age=0, step=5, tier="low", settings=Settings(), facts=Facts(), captured=True)
    result = REGISTRY["capture"].compress(tool("bash", "\n".join(hunks), command="git diff"), context)
    text = main_text(result.part)
    assert estimate_tokens(text) <= Settings().capture_command_cap_tokens * 1.1
    assert all(f"diff --git a/{name} b/{name}" in text for name in files)


def test_capture_keeps_the_start_of_one_long_line_under_a_small_cap() -> None:
    """A one-line JSON print over the command cap keeps its clipped start, not an empty output."""
    line = "[" + ", ".join(f'{{"id": {n}, "name": "item{n}"}}' for n in range(400)) + "]"
    context = Context(age=0, step=5, tier="low", settings=Settings(), facts=Facts(), captured=True)
    result = REGISTRY["capture"].compress(tool("bash", line, command="python3 emit.py"), context)
    text = main_text(result.part)
    assert text.startswith('[{"id": 0, "name": "item0"}, {"id": 1')
    assert estimate_tokens(text) <= Settings().capture_command_cap_tokens


def test_capture_keeps_more_of_a_file_view_than_of_command_output() -> None:
    """A new `cat` of a long file keeps up to the view cap; a build log or a search of the same size the smaller one."""
    text = "\n".join(f"    value_{n} = compute(value_{n - 1}, {n})  # step {n}" for n in range(1_500))
    context = Context(age=0, step=5, tier="low", settings=Settings(), facts=Facts(), captured=True)
    assert REGISTRY["capture"].compress(tool("bash", text, command="cat src/values.py"), context) is None
    small_window = Settings(context_window=40_000)
    assert whole_view_tokens(small_window) < estimate_tokens(text)
    context = Context(age=0, step=5, tier="low", settings=small_window, facts=Facts(), captured=True)
    view = REGISTRY["capture"].compress(tool("bash", text, command="cat src/values.py"), context)
    log = REGISTRY["capture"].compress(tool("bash", text, command="make"), context)
    search = REGISTRY["capture"].compress(tool("bash", text, command="grep -rn compute src/"), context)
    # The caps become character budgets at the output's own estimated density; the markers add a little.
    assert estimate_tokens(main_text(log.part)) <= Settings().capture_command_cap_tokens * 1.25
    assert estimate_tokens(main_text(search.part)) <= Settings().capture_command_cap_tokens * 1.25
    assert estimate_tokens(main_text(view.part)) > 3 * estimate_tokens(main_text(log.part))
    assert estimate_tokens(main_text(view.part)) <= whole_view_tokens(small_window) * 1.25


@pytest.mark.parametrize(("text", "viewing", "not_viewing"), [
    ("\n".join(f"internal/sem/search.go:{n}:\tvalue_{n} := compute(value_{n - 1}, {n})" for n in range(1, 600)),
     'rg -n "compute|value" internal/sem/search.go internal/sem/provider.go', 'rg -n "compute|value" internal/sem'),
    ("## main\n" + "\n".join(f"\tvalue_{n} := compute(value_{n - 1}, {n})" for n in range(1, 600)),
     "git status --short --branch\nsed -n '1,600p' internal/sem/search.go", "git status --short --branch\ngo vet ./..."),
    ("diff --git a/internal/sem/search.go b/internal/sem/search.go\n@@ -1,600 +1,600 @@\n"
     + "\n".join(f"+\tvalue_{n} := compute(value_{n - 1}, {n})" for n in range(1, 600)),
     "git diff --check && git diff -- internal/sem/search.go", "git diff HEAD~1 HEAD -- internal/sem/search.go"),
], ids=["a search of named files", "a command that prints a file on a later line", "a diff against the working tree"])
def test_capture_keeps_what_shows_a_files_lines_like_a_view(text: str, viewing: str, not_viewing: str) -> None:
    """`rg -n NAME a.go b.go`, `git status` then `sed -n '1,600p' a.go`, or `git diff -- a.go` shows a file's lines,
    which the next patch quotes: the view cap; the same search of a folder, a command that prints no file, or a diff
    of two past revisions gets the command cap."""
    context = Context(age=0, step=5, tier="low", settings=Settings(), facts=Facts(), captured=True)
    assert REGISTRY["capture"].compress(tool("bash", text, command=viewing), context) is None
    other = REGISTRY["capture"].compress(tool("bash", text, command=not_viewing), context)
    assert estimate_tokens(main_text(other.part)) <= Settings().capture_command_cap_tokens * 1.25


def test_capture_cuts_a_ten_megabyte_line() -> None:
    """One 10 MB line becomes its first characters and a counted marker."""
    part = tool("bash", "A" * 10_000_000, command="cat blob")
    text = main_text(REGISTRY["capture"].compress(part, ctx()).part)
    assert len(text) < 3_000 and "chars cut" in text
    # Nothing but the one line was there to cut, so the closing count is in characters too.
    assert text.endswith("deep_expand to restore]") and " of 10,000,000 chars cut · ccr:" in text.splitlines()[-1]


def parts_of_every_route() -> list[tuple[Part, Context]]:
    """One old part (with the facts that refine it) for each way a part is routed."""
    read = tool("read", "1: x = 1", filePath="src/a.py")
    facts = Facts(
        newer_call={"prt_grep": "call_grep_newer"},
        edit_steps={"a.py": (("src/a.py", 5),)},
        working_set=frozenset({"prt_bash"}),
    )
    replaced = Facts(replaced_runs=frozenset({"prt_bash"}))
    errored = {**tool("bash", ""), "state": {"status": "error", "input": {}, "error": "boom", "time": {}}}
    return [
        (read, ctx()),
        (read, ctx(facts=facts)),
        (tool("grep", "a.py:1: x"), ctx(facts=facts)),
        (tool("glob", "a.py"), ctx()),
        (tool("task", "done"), ctx()),
        (tool("skill", "# skill"), ctx()),
        (tool("bash", "ok", command="make test"), ctx()),
        (tool("bash", "ok", command="make test"), ctx(facts=facts)),
        (tool("bash", "ok", command="make test"), ctx(facts=replaced)),
        (tool("shell", "[1, 2, 3]", command="cat a.json"), ctx()),
        (tool("edit", "Edit applied.", filePath="src/a.py"), ctx()),
        (errored, ctx()),
        ({"id": "prt_r", "type": "reasoning", "text": "why"}, ctx()),
        ({"id": "prt_t", "type": "text", "text": "so"}, ctx()),
    ]


def test_every_route_and_every_compressor_is_reached_by_some_part() -> None:
    """Each ROUTES key is chosen for some part, and each compressor of the package is run on one:
    a route no part reaches, or a compressor no route names, fails here."""
    for name, module in REGISTRY.items():
        assert module.NAME == name and isinstance(module.READS_FACTS, bool) and callable(module.compress)
    examples = parts_of_every_route()
    keys = {key for part, context in examples for key in route_keys(part, context)}
    assert capture_compressors(tool("bash", "ok", command="ls")) == ROUTES["capture:shell"]
    assert capture_compressors(tool("read", "1: x")) == ROUTES["capture"]
    assert keys | {"capture", "capture:shell"} == set(ROUTES)
    run = {name for part, context in examples for name in compressors_for(part, context)}
    run |= {name for part, _ in examples for name in capture_compressors(part)}
    modules = {path.stem for path in Path(compressors.__file__).parent.glob("*.py")} - {"__init__"}
    assert run == set(REGISTRY) == modules


def test_a_tool_kind_routes_the_same_way_in_every_row_of_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """A new tool of a new kind is one row (kind, compressors, touches, quotes) plus its compressor."""
    assert {kind: ROUTES[kind] for kind in ("read", "search", "command", "task", "skill")} == kinds.kind_routes()
    monkeypatch.setitem(kinds.TOOLS, "webfetch", kinds.Tool("web", ("system_blocks", "command_output")))
    assert kinds.kind_routes()["web"] == ("system_blocks", "command_output")
    monkeypatch.setitem(kinds.TOOLS, "websearch", kinds.Tool("web", ("command_output",)))
    with pytest.raises(ValueError, match="websearch routes kind 'web'"):
        kinds.kind_routes()
