"""Long requests and files read: what a checkpoint keeps of a request that is long, pasted, a diff or in Chinese, the
resume block beside it, and the line naming the files the session read."""

from __future__ import annotations

from pathlib import Path

from bench.tokens_o200k import TokenCounter
from deepmem.checkpoints.api import RESUME_BUDGET_TOKENS, resume_block
from deepmem.checkpoints.quotes import (
    LOG,
    NAMES_FILE,
    NAMES_THE_WORK,
    OWN_WORDS,
    PASTED_TEXT,
    line_kinds,
    wanted_tokens,
)
from deepmem.checkpoints.render import CHECKPOINT_TOKENS, LONG_REQUEST_TOKENS, by_folder, checkpoint_sections
from deepmem.extractors import extract

from .test_checkpoint_next import ROOT, assistant, call, checkpoint_of, many_changes, quoted_newest, user

CAP = CHECKPOINT_TOKENS + LONG_REQUEST_TOKENS
QUESTION = "Why does the server refuse to start since this morning? Here is the log:"


def served(count: int) -> list[str]:
    """Log lines that say nothing the work needs."""
    return [f"2026-05-01 10:{n // 60:02}:{n % 60:02} INFO worker {n} served /api/items/{n} in {n % 7} ms" for n in range(count)]


def test_a_pasted_log_keeps_the_question_and_its_error_lines_not_the_whole_log(tmp_path: Path) -> None:
    log = [*served(300), "2026-05-01 10:05:00 ERROR cannot bind 0.0.0.0:8080: address already in use", *served(300)]
    markdown = checkpoint_of([user("\n".join([QUESTION, *log, "Fix it without changing the port."]))], tmp_path)
    newest = quoted_newest(markdown).splitlines()
    assert newest[0] == f"> {QUESTION}" and "> Fix it without changing the port." in newest, "the user's own words"
    assert "> 2026-05-01 10:05:00 ERROR cannot bind 0.0.0.0:8080: address already in use" in newest
    assert TokenCounter().count(markdown) < CHECKPOINT_TOKENS, "the log's other lines grow nothing"
    assert len(newest) < 100, "not the whole log"


def test_a_request_that_is_only_a_diff_keeps_its_file_headers(tmp_path: Path) -> None:
    hunks = []
    for n in range(40):
        hunks += [f"diff --git a/pkg/store/s{n}.go b/pkg/store/s{n}.go", f"--- a/pkg/store/s{n}.go",
                  f"+++ b/pkg/store/s{n}.go", f"@@ -{n},3 +{n},4 @@ func load{n}()",
                  *(f"+\tvalue{n}_{k} := compute(ctx, {k})" for k in range(12)), f"-\told{n} := nil"]
    markdown = checkpoint_of([user("\n".join(hunks))], tmp_path)
    newest = quoted_newest(markdown)
    assert all(f"+++ b/pkg/store/s{n}.go" in newest for n in range(40)), "every file the diff names"
    assert CHECKPOINT_TOKENS < TokenCounter().count(markdown) <= CAP, "grown for the diff, up to the cap"
    assert "of 680 lines" in markdown, "cut"


def test_a_session_whose_every_request_is_long(tmp_path: Path) -> None:
    messages = []
    for n in range(6):
        plan = "\n".join(f"{k}. In module m{n}/part{k}.py rename handler_{n}_{k} and keep its callers in step {k}"
                         for k in range(60))
        messages += [user(plan), assistant(call("read", filePath=f"{ROOT}/m{n}/part0.py"))]
    markdown = checkpoint_of(messages, tmp_path)
    assert TokenCounter().count(markdown) <= CAP
    overview = checkpoint_sections(markdown)["Task overview"]
    assert overview[0].startswith("newest request (step 5)") and "other latest requests, newest first:" in overview
    assert any(line.startswith("first request (step 0)") for line in overview)
    assert "> 0. In module m5/part0.py rename handler_5_0" in markdown
    block = resume_block(tmp_path)
    assert block is not None and TokenCounter().count(block) <= RESUME_BUDGET_TOKENS


def test_a_long_request_in_chinese_is_the_user_s_own_words(tmp_path: Path) -> None:
    rules = [chr(0x4E00 + 97 * n) + chr(0x4E00 + 89 * n + 7) for n in range(80)]
    lines = [f"第{n}步：把解析器的{rule}规则改成支持注释，并且保留原来的错误信息格式。" for n, rule in enumerate(rules)]
    assert set(line_kinds(lines)) == {OWN_WORDS}
    markdown = checkpoint_of([user("\n".join(lines)), assistant(call("read", filePath=f"{ROOT}/cmd/parse.go"))], tmp_path)
    assert all(f"> {line}" in markdown for line in lines), "kept whole: the checkpoint grew for it"
    assert CHECKPOINT_TOKENS < TokenCounter().count(markdown) <= CAP


def test_what_each_request_line_is() -> None:
    lines = ["Please fix the crash below", "```", "Traceback (most recent call last):",
             '  File "app/main.py", line 3, in <module>', "    run()", "ValueError: bad input", "```",
             "diff --git a/x.py b/x.py", "+    y = 1", "| col | col |", "and then run `make test`"]
    assert line_kinds(lines) == [OWN_WORDS, PASTED_TEXT, NAMES_THE_WORK, NAMES_THE_WORK, PASTED_TEXT, NAMES_THE_WORK,
                                 PASTED_TEXT, NAMES_THE_WORK, PASTED_TEXT, PASTED_TEXT, OWN_WORDS]
    assert line_kinds(served(2)) == [LOG, LOG]
    assert wanted_tokens("\n".join([*lines, *served(50)])) == wanted_tokens("\n".join(lines)), "a log's lines: not wanted"


def test_a_long_request_does_not_crowd_the_files_and_commands_out_of_the_resume_block(tmp_path: Path) -> None:
    plan = "\n".join(f"Step {n}: move route {n} behind the new router, keeping the old path alive for a release"
                     for n in range(120))
    messages = [*many_changes(12), assistant(call("bash", "ok", 0, command="go test ./internal/...")), user(plan)]
    checkpoint_of(messages, tmp_path)
    block = resume_block(tmp_path)
    assert block is not None and TokenCounter().count(block) <= RESUME_BUDGET_TOKENS
    assert all(f"`internal/handlers/handler_{n:02}.go`" in block for n in range(12)), "every file modified"
    assert "go test ./internal/..." in block and "> Step 0: move route 0" in block


def test_a_block_cut_short_still_names_every_file_and_command_the_checkpoint_names(tmp_path: Path) -> None:
    """Long lines of code names, many commands and a long plan: what the cut sections lose is named at the end."""
    plan = "\n".join(f"Step {n}: move route {n} behind the new router, keeping the old path alive for a release"
                     for n in range(120))
    tools = ["go test ./internal/...", "go vet ./...", "make lint", "golangci-lint run", "go build ./cmd/server"]
    runs = [assistant(call("bash", "ok", 0, command=f"cd {ROOT} && {tool} -v 2>&1 | tail -40")) for tool in tools]
    messages = [*many_changes(24), *runs, user(plan)]
    markdown = checkpoint_of(messages, tmp_path)
    block = resume_block(tmp_path)
    assert block is not None and TokenCounter().count(block) <= RESUME_BUDGET_TOKENS
    assert "## Also in checkpoint.md" in block, "the sections were cut"
    files = [f"internal/handlers/handler_{n:02}.go" for n in range(24)]
    assert all(path in markdown for path in files) and all(path in block for path in files)
    assert all(f"{tool} -v 2>&1 | tail -40" in block for tool in tools), "every command"
    assert "> Step 0: move route 0" in block, "the request keeps its floor"


def test_a_request_line_naming_a_file_by_a_link_or_in_quotes_goes_first_in_a_block() -> None:
    lines = ["the bug is in the rounding", "see https://github.com/org/repo/blob/abc123/lib/core/scales.py#L377",
             "hdu.writeto('diffbug.fits', overwrite=True)", "nothing else to say here at all"]
    assert [bool(NAMES_FILE.search(line)) for line in lines] == [False, True, True, False]


def test_files_read_and_not_changed_on_one_line_grouped_by_folder(tmp_path: Path) -> None:
    old = [assistant(call("read", filePath=f"{ROOT}/pkg/util/u{n}.go")) for n in range(6)]
    messages = [user("Look at pkg/util/u3.go first"), *old,
                assistant(call("grep", "pkg/util/u5.go:1: x", pattern="x", path="pkg/util/u5.go")),
                assistant(call("grep", "Found 2 files\n/repo/lib/found.go\n/repo/cmd/main.go", pattern="Load")),
                assistant(call("glob", "/repo/lib/found.go\n/repo/lib/once.go", pattern="lib/*.go")),
                assistant(call("read", filePath=f"{ROOT}/pkg/util/u2.go")),
                assistant(call("bash", "ok", 0, command="cat pkg/util/u1.go 2>/dev/null")),
                assistant(call("edit", filePath=f"{ROOT}/cmd/main.go", oldString="a", newString="u4.Load()")),
                assistant(call("edit", filePath=f"{ROOT}/pkg/util/u0.go", oldString="a", newString="b")),
                *[assistant(call("read", filePath=f"{ROOT}/docs/d{n}.md")) for n in range(25)]]
    looked = {f.path: f for f in extract(messages).looked}
    assert "pkg/util/u0.go" not in looked and "cmd/main.go" not in looked, "changed"
    assert not any(path.startswith("/dev/") for path in looked), "a redirect is no file read"
    assert looked["pkg/util/u3.go"].named and looked["pkg/util/u2.go"].times == 2 and looked["pkg/util/u5.go"].times == 2
    ranked = [f.path for f in extract(messages).looked]
    assert set(ranked[:3]) == {"pkg/util/u2.go", "pkg/util/u3.go", "pkg/util/u5.go"}, "used again, named: first"
    assert ranked[-2:] == ["lib/found.go", "lib/once.go"], "then what searches found, the most found first"
    assert looked["lib/found.go"].found == 2 and looked["lib/found.go"].times == 0
    markdown = checkpoint_of(messages, tmp_path)
    line = next(line for line in checkpoint_sections(markdown)["Critical context"] if line.startswith("also read"))
    assert "pkg/util/{" in line and "u3.go" in line and "lib/{found.go, once.go}" in line and line.count("/{") <= 3
    assert by_folder(["a/x.go", "b/y.go", "a/z.go", "top.md"]) == "a/{x.go, z.go}; b/{y.go}; top.md"


def test_what_the_agent_writes_into_a_user_message_is_no_request(tmp_path: Path) -> None:
    """A background task's notification (Claude Code) and the instructions blocks (Codex) come as user messages."""
    notification = ("<task-notification>\n<task-id>a1</task-id>\n<status>completed</status>\n<result>"
                    + "The review found nothing. " * 200 + "</result>\n</task-notification>")
    codex = "<permissions instructions>\nApproval policy is never.\n</permissions instructions>"
    markdown = checkpoint_of([user(codex), user("Make the parser accept comments"),
                              assistant(call("read", filePath=f"{ROOT}/cmd/parse.go")), user(notification)], tmp_path)
    assert "- newest request (step 0):\n> Make the parser accept comments\n" in markdown
    assert "Approval policy" not in markdown and "review found nothing" not in markdown
