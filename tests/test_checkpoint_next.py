"""What a checkpoint keeps for the work after it: open requests, refusals, live errors, files in hand,
commands that worked and code names; and the bad input a compaction meets."""

from __future__ import annotations

from pathlib import Path

from deepmem.checkpoints.api import compact, resume_block
from deepmem.checkpoints.render import SECTIONS, checkpoint_sections
from deepmem.checkpoints.store import LATEST
from deepmem.config import memory_dir
from deepmem.extractors import EXTRACTORS, Findings, extract
from deepmem.project import Project
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
    assert "`errorPosition`" in context


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
        "refused `rm -rf build` (step 1)", "refused `git clean -fdx` (step 2)", "refused `git stash` (step 3)"]


def test_requests_in_chinese(tmp_path: Path) -> None:
    messages = [user("请把解析器改成支持注释"), assistant(call("edit", **EDIT)),
                user("还需要在 lex.go 里保留 errorPosition 函数，不要删除"),
                assistant(say("好的，接下来我会修改词法分析器。"))]
    markdown = checkpoint_of(messages, tmp_path)
    assert "> 请把解析器改成支持注释" in markdown and "还需要在 lex.go 里保留 errorPosition 函数" in markdown
    assert "`errorPosition`" in markdown
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
