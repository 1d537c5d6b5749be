"""What a checkpoint keeps for the work after it: open requests, refusals, live errors, files in hand,
commands that worked and code names; and the bad input a compaction meets."""

from __future__ import annotations

import base64
import re
from pathlib import Path

from bench.tokens_o200k import TokenCounter
from deepmem.checkpoints.api import RESUME_BUDGET_TOKENS, compact, resume_block
from deepmem.checkpoints.render import (
    CHECKPOINT_TOKENS,
    LONG_REQUEST_TOKENS,
    SECTIONS,
    checkpoint_sections,
)
from deepmem.checkpoints.store import LATEST
from deepmem.extractors import EXTRACTORS, Findings, extract
from deepmem.extractors.requests import request_text
from deepmem.project.config import memory_dir
from deepmem.project.folder import Project
from deepmem.tokens import estimate_tokens

ROOT = "/repo"
SID = "ses_next"


def user(text: str) -> dict:
    """A user message."""
    return {"info": {"role": "user", "sessionID": SID}, "parts": [{"type": "text", "text": text}]}


def assistant(*parts: dict) -> dict:
    """An assistant message working in ROOT."""
    return {"info": {"role": "assistant", "sessionID": SID, "path": {"root": ROOT, "cwd": ROOT}}, "parts": list(parts)}


def say(text: str) -> dict:
    """An assistant text part."""
    return {"type": "text", "text": text}


def call(tool: str, output: str = "ok", exit_code: int | None = None, **inputs: object) -> dict:
    """A completed tool part."""
    state = {"status": "completed", "input": inputs, "output": output}
    if exit_code is not None:
        state["metadata"] = {"exit": exit_code}
    return {"type": "tool", "tool": tool, "state": state}


def refused(tool: str, error: str, **inputs: object) -> dict:
    """A tool part the user refused."""
    return {"type": "tool", "tool": tool, "state": {"status": "error", "input": inputs, "error": error}}


EDIT = {"filePath": f"{ROOT}/cmd/parse.go", "oldString": "func parseLine(s string)",
        "newString": "func parseLine(s string, lineNumber int)"}
WORK = [
    user("Make the config parser accept comments"),
    assistant(call("read", filePath=f"{ROOT}/cmd/parse.go"), call("read", filePath=f"{ROOT}/cmd/lex.go")),
    assistant(call("edit", **EDIT)),
    assistant(call("bash", "FAIL ./cmd", 1, command="go test ./cmd/... -run TestParse")),
    assistant(call("bash", "ok", 0, command="go test ./...")),
    user("Also report parser errors with line numbers"),
    assistant(refused("bash", "The user rejected permission to use this specific tool call with the following "
                              "feedback: do not reset, keep my local changes", command="git reset --hard")),
    assistant(refused("edit", "The user rejected permission to use this specific tool call.", **EDIT)),
    user("<command-name>/clear</command-name>"),
    user("and keep the `errorPosition` helper in lex.go"),
    assistant(say("Next I will add `errorPosition` to the lexer.")),
]


def checkpoint_of(messages: list[dict], root: Path) -> str:
    """Compact the messages and read the checkpoint written."""
    result = compact(Project.load(root), SID, messages)
    assert "error" not in result, result
    return (memory_dir(root) / LATEST).read_text(encoding="utf-8")


def test_every_findings_field_has_its_extractor() -> None:
    assert set(EXTRACTORS) == set(Findings.__struct_fields__)


def test_open_requests_and_refusals_reach_the_task_overview(tmp_path: Path) -> None:
    sections = checkpoint_sections(checkpoint_of(WORK, tmp_path))
    task = "\n".join(sections["Task overview"])
    assert "refused `git reset --hard`" in task and "refused `edit cmd/parse.go`" in task
    markdown = (memory_dir(tmp_path) / LATEST).read_text(encoding="utf-8")
    for said in ("Make the config parser accept comments", "Also report parser errors with line numbers",
                 "do not reset, keep my local changes", "keep the `errorPosition` helper in lex.go"):
        assert said in markdown
    assert "/clear" not in markdown, "the agent's own command wrappers are no request"


def test_a_refused_call_is_no_error_and_never_a_next_step(tmp_path: Path) -> None:
    sections = checkpoint_of(WORK, tmp_path)
    findings = extract(WORK)
    assert all("reset" not in error.label for error in findings.errors)
    assert "git reset" not in "\n".join(checkpoint_sections(sections).get("Next steps", []))


def test_an_error_moved_past_is_not_live() -> None:
    """`go test` of one package failed, then `go test ./...` passed: the failure is superseded, not fixed."""
    [error] = extract(WORK).errors
    assert error.label.startswith("go test ./cmd/...") and not error.resolved and not error.live


def test_files_in_hand_commands_and_code_names_beside_their_files(tmp_path: Path) -> None:
    sections = checkpoint_sections(checkpoint_of(WORK, tmp_path))
    [changed] = sections["Files modified"]
    assert changed.startswith("`cmd/parse.go` — edited") and "`lineNumber`" in changed
    context = "\n".join(sections["Critical context"])
    assert "read `cmd/lex.go`" in context and "read `cmd/parse.go`" not in context, "a file changed is not a read"
    assert "command `go test ./...` ×1" in context and "git reset" not in context
    assert "`errorPosition`" not in context, "a code name the requests quoted show is not repeated"
    assert "> and keep the `errorPosition` helper in lex.go" in (memory_dir(tmp_path) / LATEST).read_text(encoding="utf-8")


def test_a_compaction_right_after_the_first_request(tmp_path: Path) -> None:
    markdown = checkpoint_of([user("Add a --verbose flag to the CLI")], tmp_path)
    sections = checkpoint_sections(markdown)
    assert [line[3:] for line in markdown.splitlines() if line.startswith("## ")] == list(SECTIONS)
    assert "> Add a --verbose flag to the CLI" in markdown
    assert sections["Next steps"] == ["answer the last request (above), which has no reply yet"]


def test_a_segment_with_no_edit(tmp_path: Path) -> None:
    messages = [user("Why does the build fail?"), assistant(call("read", filePath=f"{ROOT}/Makefile")),
                assistant(call("bash", "ok", 0, command="make build"))]
    sections = checkpoint_sections(checkpoint_of(messages, tmp_path))
    assert sections["Files modified"] == []
    assert "read `Makefile` ×1, last at step 1" in sections["Critical context"][0]
    assert "command `make build` ×1" in sections["Critical context"]


def test_a_user_who_rejects_every_call(tmp_path: Path) -> None:
    messages = [user("Clean up the repo"),
                *(assistant(refused("bash", "The user rejected permission to use this specific tool call.",
                                    command=command)) for command in ("rm -rf build", "git clean -fdx", "git stash"))]
    sections = checkpoint_sections(checkpoint_of(messages, tmp_path))
    assert sections["Errors"] == [] and sections["Files modified"] == []
    assert not any(line.startswith("fix:") for line in sections["Next steps"])
    assert [line for line in sections["Task overview"] if line.startswith("refused")] == [
        "refused `git stash` (step 3)", "refused `git clean -fdx` (step 2)", "refused `rm -rf build` (step 1)"]


def test_requests_in_chinese(tmp_path: Path) -> None:
    messages = [user("请把解析器改成支持注释"), assistant(call("edit", **EDIT)),
                user("还需要在 lex.go 里保留 errorPosition 函数，不要删除"),
                assistant(say("好的，接下来我会修改词法分析器。"))]
    markdown = checkpoint_of(messages, tmp_path)
    assert "> 请把解析器改成支持注释" in markdown and "还需要在 lex.go 里保留 errorPosition 函数" in markdown
    assert "errorPosition" in {name for name, _ in extract(messages).context.names}, "shown in the request quoted"
    assert any("接下来我会修改词法分析器" in line for line in checkpoint_sections(markdown)["Next steps"])


def test_a_checkpoint_taken_twice_in_a_row(tmp_path: Path) -> None:
    """Twice on the same messages: the same bytes. Then on nothing but the handoff: the session's checkpoint stays."""
    first = checkpoint_of(WORK, tmp_path)
    assert checkpoint_of(WORK, tmp_path) == first
    handoff = [user("Handoff: resuming a compacted session; the full checkpoint is in .deep-memory/checkpoint.md."),
               assistant(say("Continuing."))]
    result = compact(Project.load(tmp_path), SID, handoff)
    assert result.get("reused") and result["context"] == [first]
    assert (memory_dir(tmp_path) / LATEST).read_text(encoding="utf-8") == first


def test_a_block_leaves_out_the_session_line_and_the_empty_sections(tmp_path: Path) -> None:
    """checkpoint.md keeps them; the resume block gives their room to what the work goes on with."""
    written = checkpoint_of(WORK, tmp_path)
    assert f"Session `{SID}`" in written and "## Key decisions\n- (none)\n" in written
    block = resume_block(tmp_path)
    assert block is not None and SID not in block and "(none)" not in block and "## Key decisions" not in block
    assert "## Files modified\n- `cmd/parse.go`" in block


def test_checkpoint_md_edited_by_hand_before_resume(tmp_path: Path) -> None:
    """A hand edit that keeps the end mark is what resumes, within budget; one that drops it is ignored."""
    written = checkpoint_of(WORK, tmp_path)
    path = memory_dir(tmp_path) / LATEST
    edited = written.replace("## Key decisions\n- (none)\n", "## Key decisions\n- use a hand-written lexer\n")
    edited = edited.replace("## Constraints\n", "## Notes by hand\n" + "- long pasted note line\n" * 400 + "\n## Constraints\n")
    path.write_text(edited, encoding="utf-8")
    block = resume_block(tmp_path)
    assert block is not None and "use a hand-written lexer" in block and estimate_tokens(block) <= 1_000
    assert "Also report parser errors with line numbers" in block
    path.write_text(edited.replace("<!-- deepmem:checkpoint:end -->", ""), encoding="utf-8")
    fallback = resume_block(tmp_path)
    assert fallback is not None and "use a hand-written lexer" not in fallback and "parser" in fallback


def quoted_newest(markdown: str) -> str:
    """The quote lines of the newest request in a checkpoint's task overview."""
    lines = markdown.split("- newest request", 1)[1].split("\n- ", 1)[0].split("\n## ", 1)[0]
    return "\n".join(line for line in lines.splitlines() if line.startswith("> "))


REVIEW = ("in parse.go: the lexer drops the position of the token that failed, so the error says line 0. "
          "Keep the position in the token and report it, like the other parsers in this folder do, and keep "
          "the old error text for the callers that match on it. The message stays on one line, since the editor "
          "plugins parse it.\n"
          "1. add `pos int` to `token`\n2. set it in `next()`\n3. use it in `errorAt` and test it in lex_test.go\n"
          "This makes the errors point at the real line rather than the first one.")


def test_the_newest_request_is_kept_whole_and_the_earlier_ones_get_what_it_leaves(tmp_path: Path) -> None:
    earlier = "Also report parser errors with line numbers. " + "Mind the callers. " * 40
    messages = [*WORK[:5], user(earlier), assistant(say("Done.")), user(REVIEW)]
    markdown = checkpoint_of(messages, tmp_path)
    assert quoted_newest(markdown) == "\n".join(f"> {line}" for line in REVIEW.splitlines())
    assert "- newest request (step 5):" in markdown and f"- step 4:\n> {earlier.strip()}\n" in markdown
    overview = checkpoint_sections(markdown)["Task overview"]
    assert overview[0] == "newest request (step 5):" and overview[-1] == "first request (step 0):", "the first last"
    block = resume_block(tmp_path)
    assert block is not None and all(line in block for line in REVIEW.splitlines())


def test_a_request_of_5000_words_keeps_the_lines_that_name_files_and_steps_within_budget(tmp_path: Path) -> None:
    prose = [f"We should think again about part {n} of how the whole configuration story works for people who start."
             for n in range(480)]
    request = "\n".join([*prose[:240], "3. then move the defaults into config/defaults.toml", *prose[240:],
                         "and run `make check` when done"])
    assert len(request.split()) > 5_000
    markdown = checkpoint_of([*WORK, user(request)], tmp_path)
    newest = quoted_newest(markdown)
    assert "> 3. then move the defaults into config/defaults.toml\n" in newest
    assert newest.endswith("\n> and run `make check` when done"), "kept in the request's own order"
    assert newest.count("> We should think again") == 1, "lines that say nothing new are quoted once"
    assert TokenCounter().count(markdown) <= CHECKPOINT_TOKENS
    assert "of 482 lines, the user's own words first, then those naming files, code, commands and steps:" in markdown
    block = resume_block(tmp_path)
    assert block is not None and estimate_tokens(block) <= RESUME_BUDGET_TOKENS and "config/defaults.toml" in block


def test_a_request_that_is_only_a_pasted_log(tmp_path: Path) -> None:
    log = "\n".join([f"INFO worker {n} served the request in {n % 7} ms" for n in range(400)]
                    + ["ERROR cannot open src/server/routes.py: permission denied"]
                    + [f"INFO worker {n} idle" for n in range(200)])
    markdown = checkpoint_of([user(log)], tmp_path)
    newest = quoted_newest(markdown)
    assert "> ERROR cannot open src/server/routes.py: permission denied" in newest.splitlines(), "the line naming a file"
    assert newest.startswith("> INFO worker 0 served") and "worker 399 served" not in newest, "then the first lines"
    assert "> INFO worker 0 idle" in newest and "worker 1 idle" not in newest, "a line that says nothing new is left out"
    assert "of 601 lines" in markdown
    overview = checkpoint_sections(markdown)["Task overview"]
    assert overview[0].startswith("newest request (step 0)"), "the only request is quoted once, as the newest"


def test_a_pasted_base64_blob_is_left_out_and_never_quoted(tmp_path: Path) -> None:
    blob = base64.b64encode(bytes(range(256)) * 3_000).decode()
    wrapped = base64.encodebytes(bytes(range(256)) * 3_000).decode()
    assert len(blob) > 1_000_000 - 25_000
    for pasted in (blob, wrapped):
        assert request_text(f"see:\n{pasted.strip()}\nthanks") == f"see:\n[{len(pasted.strip()):,} characters of encoded data left out]\nthanks"
        markdown = checkpoint_of([*WORK, user(f"Decode this and tell me what it is:\n{pasted}\nthanks")], tmp_path)
        assert "> Decode this and tell me what it is:" in markdown and "> thanks" in markdown
        assert not re.search(r"[A-Za-z0-9+/=]{60}", markdown), "no run of the blob reaches the checkpoint"
        assert estimate_tokens(markdown) <= 1_500


def test_a_turn_the_user_interrupted_is_no_request(tmp_path: Path) -> None:
    messages = [*WORK, user("[Request interrupted by user for tool use]")]
    markdown = checkpoint_of(messages, tmp_path)
    assert "interrupted" not in markdown
    assert "- newest request (step 6):\n> and keep the `errorPosition` helper in lex.go" in markdown


def many_changes(count: int) -> list[dict]:
    """A session that changes `count` files, each edit holding two code names."""
    return [user("Rename the handlers across the service"),
            *(assistant(call("edit", filePath=f"{ROOT}/internal/handlers/handler_{n:02}.go",
                             oldString=f"func oldHandlerName{n}(", newString=f"func newHandlerName{n}(ctx contextValue{n}")) for n in range(count))]


def test_a_cut_resume_block_fits_its_budget_in_real_tokens_and_keeps_the_newest_files(tmp_path: Path) -> None:
    """The estimate counts this Markdown low: fitted to the budget less the estimate's error, the block fits in
    o200k tokens too; files are listed most recently changed first, so the cut keeps those."""
    checkpoint_of([*many_changes(60), user(REVIEW)], tmp_path)
    block = resume_block(tmp_path)
    assert block is not None and "handler_00.go" not in block, "the block was cut"
    assert TokenCounter().count(block) <= RESUME_BUDGET_TOKENS
    assert "`internal/handlers/handler_59.go`" in block and "`newHandlerName59`" in block
    assert all(line in block for line in REVIEW.splitlines()), "the newest request's lines stay whole when cut"


def test_a_long_newest_request_grows_the_checkpoint_up_to_its_cap(tmp_path: Path) -> None:
    """Beside a long list of files, a plan of 40 steps is kept whole by growing checkpoint.md past 1,500 tokens; a
    plan of 400 steps is cut at the cap, 3,000 tokens in all, and the files modified keep their lines."""
    plan = "\n".join([f"Step {n}: move the handler of route {n} behind the new router in internal/routes/r{n}.go"
                      for n in range(40)])
    markdown = checkpoint_of([*many_changes(36), user(plan)], tmp_path)
    assert "- newest request (step 36):\n" in markdown and all(f"> {line}\n" in markdown for line in plan.splitlines())
    assert "> Rename the handlers across the service" in markdown, "the first request keeps its floor"
    assert CHECKPOINT_TOKENS < TokenCounter().count(markdown) <= CHECKPOINT_TOKENS + LONG_REQUEST_TOKENS
    huge = "\n".join([f"Step {n}: move the handler of route {n} behind router {n % 7} in internal/routes/r{n}.go"
                      for n in range(400)])
    markdown = checkpoint_of([*many_changes(36), user(huge)], tmp_path)
    assert "- newest request (step 36), " in markdown and " of 400 lines" in markdown, "cut"
    assert TokenCounter().count(markdown) <= CHECKPOINT_TOKENS + LONG_REQUEST_TOKENS
    assert "`internal/handlers/handler_35.go`" in markdown and "`internal/handlers/handler_00.go`" in markdown


def test_a_session_carried_on_from_a_summary(tmp_path: Path) -> None:
    """The summary leads the overview only while no request was typed after it; then the request leads."""
    summary = user("This session is being continued from a previous conversation. Summary: parser comments.")
    carried = checkpoint_of([summary, assistant(call("read", filePath=f"{ROOT}/cmd/parse.go"))], tmp_path)
    assert "- carried on from an earlier summary:\n> This session is being continued" in carried
    typed = checkpoint_of([summary, assistant(say("Continuing.")), user("now add the tests")], tmp_path)
    assert "carried on" not in typed and "- newest request (step 1):\n> now add the tests" in typed
