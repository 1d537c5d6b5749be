"""Memory that carries a project forward: episodes, facts from outcomes, the ranked stable block, staleness,
and the inputs that must not break it (renamed files, no history, hand edits, a shared global scope, Chinese)."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepmem.bridge.tools import run_tool
from deepmem.checkpoints.api import compact, resume_block
from deepmem.checkpoints.dream import dream
from deepmem.extractors.calls import build_timeline
from deepmem.extractors.errors import find_errors
from deepmem.extractors.lasting import find_candidates
from deepmem.extractors.outcomes import build_command, command_key, find_outcomes
from deepmem.memory import api, inject
from deepmem.memory.entries import Entry
from deepmem.memory.episodes import episodes
from deepmem.memory.index import core_work
from deepmem.memory.query import clean_query
from deepmem.project.folder import Project
from deepmem.tokens import estimate_tokens
from deepmem.types import InputError

DAY = 86_400_000
START = 1_767_600_000_000
"""2026-01-05, in OpenCode's milliseconds."""


@pytest.fixture(autouse=True)
def global_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own global memory folder."""
    folder = tmp_path / "global"
    monkeypatch.setenv("DEEP_MEMORY_GLOBAL_ROOT", str(folder))
    return folder


@pytest.fixture
def root(tmp_path: Path) -> Project:
    project = tmp_path / "project"
    project.mkdir()
    return Project.load(project)


def user(text: str, day: int = 0) -> dict:
    return {"info": {"role": "user", "id": f"u{day}", "time": {"created": START + day * DAY}},
            "parts": [{"type": "text", "text": text}]}


def assistant(root: Path, day: int, *parts: dict) -> dict:
    info = {"role": "assistant", "id": f"a{day}", "path": {"root": str(root), "cwd": str(root)},
            "time": {"created": START + day * DAY + 60_000}}
    return {"info": info, "parts": list(parts)}


def bash(command: str, exit: int = 0) -> dict:
    return {"type": "tool", "tool": "bash", "state": {"status": "completed", "input": {"command": command},
                                                      "output": "", "metadata": {"exit": exit}}}


def edit(path: str, new: str) -> dict:
    return {"type": "tool", "tool": "edit", "state": {"status": "completed", "output": "",
                                                      "input": {"filePath": path, "oldString": "x", "newString": new}}}


def session(root: Path, day: int, request: str, *parts: dict) -> list[dict]:
    """One user request, then one assistant message holding the tool calls, on `day` after the start."""
    return [user(request, day), assistant(root, day, *parts)]


def work(root: Path, day: int, request: str, files: tuple[str, ...], commands: tuple[tuple[str, int], ...] = ()) -> None:
    """Checkpoint a session that edits `files` (relative to the project) and runs `commands`."""
    parts = [edit(str(root / path), f"func Handle{day}() {{\n}}\n") for path in files]
    parts += [bash(command, status) for command, status in commands]
    compact(root, f"ses_{day}", session(root, day, request, *parts))


def test_command_keys_keep_the_stable_words() -> None:
    """Program and subcommands stay; paths, flags, a leading `cd` and environment settings go."""
    assert command_key("cd /repo && go test ./cmd/... -run TestX") == "go test"
    assert command_key("mise run test:integration 2>&1 | tail") == "mise run test:integration"
    assert command_key("CGO_ENABLED=0 go build ./...") == "go build"
    assert command_key("python -m pytest tests/test_x.py -q") == "python -m pytest"
    assert build_command("ls tests") == "" and build_command("pip install pytest-mock") == ""
    assert build_command("mise run lint") == "mise run lint"


def test_outcomes_keep_commands_whose_newest_run_exited_zero(root: Path) -> None:
    """A command that failed and then passed counts; one whose newest run failed does not; definitions come from edits."""
    messages = session(root, 0, "Fix it.", bash("go test ./...", 1), bash("go test ./...", 0), bash("mise run lint", 2),
                       edit(str(root / "cmd/main.go"), "func Parse(x int) error {\n}\ntype Config struct {}\n"))
    found = find_outcomes(build_timeline(messages))
    assert found.commands == ("go test",)
    assert found.symbols == (("Parse", "cmd/main.go"), ("Config", "cmd/main.go"))


def test_an_error_that_recurred_names_the_change_that_ended_it(root: Path) -> None:
    """A command that failed twice, then passed after an edit, is told in the episode with the file changed."""
    messages = session(root, 0, "Make the build pass", bash("go build ./...", 1), bash("go build ./...", 1),
                       edit(str(root / "cmd/flags.go"), "var x = 1\n"), bash("go build ./...", 0))
    compact(root, "ses_fix", messages)
    assert "fixed `go build ./...` (failed ×2) by changing `cmd/flags.go`" in episodes(root)[0].text


def test_one_episode_per_session_found_by_search(root: Path) -> None:
    """The episode holds the goal, files changed, the commands that worked and the date; a second checkpoint of the
    same session replaces it."""
    work(root, 0, "Make the checkpoint command print its id", ("cmd/checkpoint.go",), (("mise run test", 0),))
    work(root, 0, "Make the checkpoint command print its id", ("cmd/checkpoint.go", "cmd/id.go"), (("mise run test", 0),))
    work(root, 3, "Speed up the session listing", ("cmd/sessions.go",))
    found = episodes(root)
    assert len(found) == 2
    first = found[0]
    assert first.type == "episode" and first.time.startswith("2026-01-05")
    assert first.text.startswith("Make the checkpoint command print its id")
    assert "`cmd/checkpoint.go`, `cmd/id.go`" in first.text and "worked `mise run test` (exit 0)" in first.text
    hits = api.search(root, "checkpoint command id", 3, "all")
    assert hits[0]["id"] == first.id and hits[0]["type"] == "episode"
    assert all(entry.type != "episode" for entry in api.entries(root, "all"))


def test_the_stable_block_ranks_commands_and_hot_files_and_is_the_same_bytes(root: Path) -> None:
    """Commands that worked in most sessions first; a file is hot once two sessions changed it; same memory, same bytes."""
    for day in range(6):
        files = ("cmd/strategy.go", f"cmd/once_{day}.go")
        work(root, day, f"Change the strategy, part {day}", files, (("mise run test", 0), ("go build ./...", day % 2)))
    block = api.stable_block(root)
    assert "`mise run test` (6), `go build` (3)" in block
    assert "`cmd/strategy.go` (`Handle5`)" in block
    assert "once_" not in block
    assert block == api.stable_block(root)
    assert estimate_tokens(block) <= inject.STABLE_BUDGET_TOKENS


def test_the_stable_block_caps_rules_and_says_how_many_more(root: Path) -> None:
    """Only the newest rules are shown; the rest stay searchable."""
    subjects = ["parser", "lexer", "schema", "fixtures", "changelog", "migrations", "vendor folder", "proto files"]
    for subject in subjects[: inject.MAX_RULES + 3]:
        api.store(root, f"Always regenerate the {subject} after editing its source.", "constraint")
    block = api.stable_block(root)
    assert block.count("Always regenerate the") == inject.MAX_RULES
    assert "(3 more stored;" in block


def test_a_persons_chat_is_not_a_rule_unless_it_states_one(root: Path) -> None:
    """Requests, questions and asides are not memories; "always", "never", "we use" and "must" said of the project are."""
    said = ["never mind, we'll look at it later.", "(don't add to many, just the core issue(s)",
            "can you review the change in this branch, where we use `git add` but don't change the tree",
            "Always run `mise run fmt` together with `mise run lint`.", "We use testify for assertions.",
            "以后都用中文写代码注释和文档说明。", "这个问题先不管了，我们以后再看看吧。"]
    messages = [user(text, day) for day, text in enumerate(said)]
    kept = {candidate.text: candidate.type for candidate in find_candidates(build_timeline(messages))}
    assert kept == {"Always run `mise run fmt` together with `mise run lint`.": "constraint",
                    "We use testify for assertions.": "constraint", "以后都用中文写代码注释和文档说明。": "constraint"}


def test_a_changed_file_marks_the_entry_and_a_gone_file_retires_it(root: Path) -> None:
    """Staleness by content hash: changed → said so wherever shown; renamed or deleted → out of the stable block and
    the whisper, marked in search."""
    (root / "store.go").write_text("package store\n")
    (root / "cache.go").write_text("package cache\n")
    api.store(root, "Never lock the session store from `store.go` while holding the cache.", "constraint")
    api.store(root, "Always flush the cache in `cache.go` before the session store closes.", "constraint")
    assert "[stale" not in api.stable_block(root)
    (root / "store.go").write_text("package store\n\nfunc Lock() {}\n")
    (root / "cache.go").rename(root / "lru.go")
    block = api.stable_block(root)
    assert "`store.go` changed since" in block
    assert "flush the cache" not in block
    hits = {hit["text"] for hit in api.search(root, "flush the cache before the session store closes", 5)}
    assert any("`cache.go` is gone" in text for text in hits)
    whisper = api.whisper(root, "flush the cache before the session store closes") or ""
    assert "flush the cache" not in whisper


def test_a_hot_file_that_is_gone_leaves_the_block(root: Path) -> None:
    """A file recent sessions changed, deleted since, is no longer offered as hot."""
    (root / "cmd").mkdir()
    (root / "cmd" / "old.go").write_text("package cmd\n")
    for day in range(2):
        work(root, day, f"Rework the old command {day}", ("cmd/old.go",))
    assert "`cmd/old.go`" in api.stable_block(root)
    (root / "cmd" / "old.go").unlink()
    assert "`cmd/old.go`" not in api.stable_block(root)


def test_a_project_with_no_history(root: Path) -> None:
    """Nothing stored: no memory block, no whisper, no resume, empty search."""
    assert api.stable_block(root) == ""
    assert api.whisper(root, "How does the release script work?") is None
    assert resume_block(root) is None
    assert api.search(root, "release script", 3) == []


def test_memory_edited_by_hand_between_sessions(root: Path) -> None:
    """A rewritten entry, a stray line and a removed entry survive the next session's checkpoint and dream; the
    rewritten entry is judged afresh (its old file hash no longer applies)."""
    (root / "api.go").write_text("package api\n")
    api.store(root, "Never return raw errors from `api.go` handlers.", "constraint")
    api.store(root, "We use zerolog for logging.", "constraint")
    path = root / ".deep-memory" / "MEMORY.md"
    text = path.read_text().replace("Never return raw errors", "Never return wrapped errors")
    text = text.replace("- [", "stray words typed by hand\n- [", 1).replace("We use zerolog for logging.", "")
    path.write_text(text)
    (root / "api.go").write_text("package api\n\nfunc Serve() {}\n")
    work(root, 1, "Add the health endpoint", ("api.go",), (("go test ./...", 0),))
    dream(root)
    block = api.stable_block(root)
    assert "Never return wrapped errors from `api.go` handlers." in block and "[stale" not in block
    assert "stray words typed by hand" in path.read_text()


def test_two_projects_share_the_global_scope(tmp_path: Path) -> None:
    """Episodes, commands and hot files stay with their project; a global rule reaches both."""
    (tmp_path / "one").mkdir(), (tmp_path / "two").mkdir()
    first, second = Project.load(tmp_path / "one"), Project.load(tmp_path / "two")
    for day in range(2):
        work(first, day, "Tune the parser", ("parser.go",), (("go test ./...", 0),))
        work(second, day, "Tune the renderer", ("render.py",), (("pytest", 0),))
    api.store(first, "Never push to main without review.", "constraint", scope="global")
    one, two = api.stable_block(first), api.stable_block(second)
    assert "`go test`" in one and "`pytest`" not in one and "`parser.go`" in one and "`render.py`" not in one
    assert "`pytest`" in two and "`go test`" not in two
    assert "Never push to main" in one and "Never push to main" in two
    assert all("renderer" not in hit["text"] for hit in api.search(first, "Tune the renderer", 5))


def test_a_session_in_chinese(root: Path) -> None:
    """A Chinese goal makes the episode and finds it again; a Chinese rule reaches the block after dream."""
    work(root, 0, "修复会话列表的排序问题。以后都用中文写代码注释和文档说明。", ("cmd/list.go",), (("go test ./...", 0),))
    dream(root)
    assert episodes(root)[0].text.startswith("修复会话列表的排序问题。")
    assert api.search(root, "会话列表排序", 1)[0]["type"] == "episode"
    assert "以后都用中文写代码注释和文档说明" in api.stable_block(root)


def test_the_whisper_is_silent_without_a_relevant_memory_and_never_repeats(root: Path) -> None:
    """Nothing relevant → no whisper; an entry the session was already shown is not whispered again."""
    api.store(root, "The release script signs the tarball with the project key.", "fact")
    assert api.whisper(root, "Rename the button colour on the settings page") is None
    first = api.whisper(root, "How does the release script sign the tarball?")
    assert first and "release script" in first
    assert api.whisper(root, "How does the release script sign the tarball?", shown=first) is None


def test_hot_files_share_their_folder_once(root: Path) -> None:
    """Files under the most shared folder are listed after it, by the rest of their path; the others in full."""
    for day in range(2):
        work(root, day, f"Refactor the strategies {day}", ("cmd/cli/strategy/auto.go", "cmd/cli/strategy/manual.go",
                                                           "cmd/cli/root.go", "docs/strategies.md"))
    block = api.stable_block(root)
    assert "in `cmd/cli/`: `root.go` (`Handle1`), `strategy/auto.go` (`Handle1`), `strategy/manual.go` (`Handle1`); " \
           "`docs/strategies.md`" in block


def test_later_whispers_show_fewer_hits(root: Path) -> None:
    """The session's first whisper shows two hits; once a whisper was shown, the next ones show one."""
    api.store(root, "The release script signs the tarball with the project key.", "fact")
    api.store(root, "The release script uploads the signed tarball to the mirror.", "fact")
    api.store(root, "The release script tags the tarball version in git.", "fact")
    first = api.whisper(root, "How does the release script handle the tarball?") or ""
    assert first.count("- [") == 2
    later = api.whisper(root, "How does the release script handle the tarball?", shown=first) or ""
    assert later.count("- [") == 1


def test_an_episode_notes_files_gone_but_not_files_changed(root: Path) -> None:
    """An episode is dated history: a file edited since is not news, a file deleted since is said, and the episode
    stays findable."""
    (root / "cmd").mkdir()
    (root / "cmd" / "keep.go").write_text("package cmd\n")
    (root / "cmd" / "drop.go").write_text("package cmd\n")
    work(root, 0, "Split the flag parsing", ("cmd/keep.go",))
    work(root, 1, "Remove the legacy flags", ("cmd/drop.go",))
    (root / "cmd" / "keep.go").write_text("package cmd\n\nfunc Keep() {}\n")
    (root / "cmd" / "drop.go").unlink()
    texts = {hit["text"] for hit in api.search(root, "flag parsing legacy flags", 5)}
    assert any("Split the flag parsing" in text and "[stale" not in text for text in texts)
    assert any("Remove the legacy flags" in text and "`cmd/drop.go` is gone" in text for text in texts)


def test_an_episode_cannot_be_stored_by_hand(root: Path) -> None:
    """Episodes come from checkpoints only: storing one is refused with a clear message, and nothing is written."""
    with pytest.raises(InputError, match="episodes are written by checkpoints"):
        api.store(root, "I fixed the parser yesterday.", "episode")
    assert not (root / ".deep-memory" / "MEMORY.md").exists()


def test_a_query_drops_slash_command_echoes_and_keeps_what_was_typed() -> None:
    """A client's echo of a slash command, its output and colours are not words of the query; the arguments are."""
    echoed = ("<command-message>workflows:plan</command-message>\n<command-name>/workflows:plan</command-name>\n"
              "<command-args>add telemetry to entire enable</command-args>\n"
              "<local-command-stdout>\x1b[2mCompacted\x1b[22m</local-command-stdout>")
    assert clean_query(echoed) == "add telemetry to entire enable"
    assert clean_query("/workflows:review") == ""
    assert clean_query("/compact keep the parser notes") == "keep the parser notes"
    assert clean_query("把 `a/b.go` 的错误修好") == "把 `a/b.go` 的错误修好"


def test_a_search_naming_a_file_finds_the_session_that_changed_it(root: Path) -> None:
    """A file the query names (by path or by name) lifts the episode that changed it above newer, wordier ones."""
    work(root, 0, "Tidy things up", ("internal/store/session_state.go",))
    for day in range(1, 6):
        work(root, day, f"please look at the output of the list command again {day}", (f"docs/page{day}.md",))
    for query in ("please look at the output of session_state.go", "please look at `internal/store/session_state.go`"):
        hits = api.search(root, query, 3, "all")
        assert "session_state.go" in hits[0]["text"]
    with pytest.raises(InputError):
        api.search(root, "bad\x07query `session_state.go`", 3, "all")


def test_core_work_counts_the_files_recent_sessions_keep_changing() -> None:
    """An episode's core work is the share of its files (up to three) that two or more recent episodes changed."""
    texts = ["a · changed `x.go`, `y.go`", "b · changed `x.go`, `y.go`, `z.go`", "c · changed `w.go`", "note"]
    entries = [Entry(f"e{n}", "episode" if n < 3 else "fact", text, f"2026-01-0{n + 1}T00:00Z", "project")
               for n, text in enumerate(texts)]
    assert core_work(entries).round(3).tolist() == [0.667, 0.667, 0.0, 0.0]


def test_a_failed_edit_is_labelled_with_its_project_relative_path(root: Path) -> None:
    """The checkpoint names a file in the project as the project does, never by this machine's absolute path."""
    failed = {"type": "tool", "tool": "edit", "state": {
        "status": "error", "error": "oldString not found", "input": {
            "filePath": str(root / "cmd" / "main.go"), "oldString": "x", "newString": "y"}}}
    labels = [error.label for error in find_errors(build_timeline(session(root, 0, "Rename the flag", failed)))]
    assert labels == ["edit cmd/main.go"]


def test_resume_offers_the_earlier_sessions_that_changed_the_same_files(root: Path) -> None:
    """The resume block of a new session names the past episodes that edited what the latest one edited."""
    work(root, 0, "Make the checkpoint command print its id", ("cmd/checkpoint.go",))
    work(root, 1, "Speed up the session listing", ("cmd/sessions.go",))
    work(root, 2, "Checkpoint ids get a short form", ("cmd/checkpoint.go", "cmd/id.go"))
    block = resume_block(root)
    assert block is not None and "## Related earlier sessions" in block
    related = block.split("## Related earlier sessions", 1)[1]
    assert "Make the checkpoint command print its id" in related and "session listing" not in related
    work(root, 3, "Write the changelog", ("CHANGELOG.md",))
    assert "## Related earlier sessions" not in (resume_block(root) or "")


def test_a_search_naming_a_file_says_what_past_sessions_changed_with_it(root: Path) -> None:
    """Files changed in the same sessions twice or more change together; once is chance. The model's
    memory_search shows it after the hits."""
    work(root, 0, "Make the checkpoint command print its id", ("cmd/checkpoint.go", "cmd/id.go", "cmd/sessions.go"))
    work(root, 1, "Checkpoint ids get a short form", ("cmd/checkpoint.go", "cmd/id.go", "cmd/id_test.go"))
    work(root, 2, "Speed up the session listing", ("cmd/sessions.go",))
    line = api.together(root, "why does `cmd/checkpoint.go` print the long id?")
    assert line == "`cmd/checkpoint.go` changed together with `cmd/id.go` (2 sessions)"
    assert api.together(root, "checkpoint.go again") == line, "a file is named by its name too"
    assert api.together(root, "what about sessions.go") == "" and api.together(root, "no file here") == ""
    shown = run_tool(root, "memory_search", {"query": "the id in checkpoint.go"}, lambda key, lines: "")
    assert shown.endswith("In past sessions:\n" + line)
