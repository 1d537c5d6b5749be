"""Memory store, search and injection on real files in temporary folders."""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from deepmem.memory import api, vectors
from deepmem.memory.embed import DEFAULT_MODEL, encode, model_name
from deepmem.memory.entries import parse_markdown, render_markdown
from deepmem.memory.files import read_memory_file
from deepmem.memory.index import SearchIndex
from deepmem.memory.inject import STABLE_BUDGET_TOKENS
from deepmem.memory.search import rank
from deepmem.memory.store import import_entries, memory_path
from deepmem.memory.tokenize import tokenize
from deepmem.memory.vectors import VectorTable
from deepmem.project.config import load_settings
from deepmem.project.folder import Project
from deepmem.tokens import estimate_tokens
from deepmem.types import ConfigError, InputError


@pytest.fixture(autouse=True)
def global_root(tmp_path, monkeypatch):
    """Every test gets its own global memory folder."""
    folder = tmp_path / "global"
    monkeypatch.setenv("DEEP_MEMORY_GLOBAL_ROOT", str(folder))
    monkeypatch.delenv("DEEPMEM_MEMORY_MODEL", raising=False)
    return folder


@pytest.fixture
def root(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    return Project.load(project)


def memory_md(root):
    return (root / ".deep-memory" / "MEMORY.md").read_text()


# Tokenizer


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("getUserName", {"getusername", "get", "user", "name"}),
        ("snake_case_name", {"snake_case_name", "snake", "case", "name"}),
        ("src/auth/user_service.py", {"src/auth/user_service.py", "src", "auth", "user", "service", "py"}),
        ("os.path.join", {"os.path.join", "os", "path", "join"}),
        ("HTTPServer", {"httpserver", "http", "server"}),
        ("The tests were failing", {"test", "fail"}),
    ],
)
def test_tokenizer_splits_code_and_keeps_it_whole(text, expected):
    assert set(tokenize(text)) == expected


def test_tokenizer_gives_chinese_words_and_bigrams():
    tokens = tokenize("数据库迁移脚本")
    assert {"数据", "据库", "库迁", "迁移", "移脚", "脚本"} <= set(tokens)
    assert "数据库" in tokens


def test_tokenizer_mixed_text_keeps_each_script():
    tokens = set(tokenize("用 getUserName 读取用户"))
    assert {"getusername", "user", "读取", "用户"} <= tokens


# Store, dedup, forget


def test_store_writes_grouped_markdown_with_ids_and_times(root):
    decision = api.store(root, "Use PostgreSQL 16 for the main database.", "decision")
    gotcha = api.store(root, "pytest -x hides the second failure in CI logs.", "gotcha")
    assert decision["status"] == gotcha["status"] == "stored"
    text = memory_md(root)
    assert text.index("## Decisions") < text.index("## Gotchas")
    assert f"- [{decision['id']}] (" in text
    assert decision["entry"]["time"].endswith("Z")


def test_appending_in_place_gives_the_bytes_of_a_full_render(root):
    for n, kind in enumerate(["decision", "fact", "decision", "gotcha", "fact", "decision"]):
        api.store(root, f"Entry {n} about subsystem s{n * 31} and its owner o{n * 17}", kind)
    assert memory_md(root) == render_markdown(api.entries(root, "project"))
    assert api.entries(root, "project") == parse_markdown(memory_md(root)).entries


def test_store_after_a_hand_reordered_file_matches_a_fresh_read(root):
    api.store(root, "Use PostgreSQL 16 for the main database.", "decision")
    api.store(root, "The staging host is called atlas", "fact")
    path = root / ".deep-memory" / "MEMORY.md"
    head, decisions, facts = path.read_text().split("\n\n## ")
    path.write_text(f"{head}\n\n## {facts.rstrip()}\n\n## {decisions.rstrip()}\n")
    api.store(root, "Deploys run from the release branch only", "decision")
    api.store(root, "The cache lives in redis on port 6380", "fact")
    assert api.entries(root, "project") == parse_markdown(memory_md(root)).entries
    assert [entry.type for entry in api.entries(root, "project")] == ["decision", "decision", "fact", "fact"]


def test_store_keeps_a_same_size_hand_edit_that_kept_the_timestamp(root):
    api.store(root, "The staging host is called atlas", "fact")
    path = root / ".deep-memory" / "MEMORY.md"
    before = path.stat()
    path.write_text(path.read_text().replace("atlas", "delta"))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    api.store(root, "Deploys run from the release branch only", "decision")
    texts = memory_md(root)
    assert "called delta" in texts and "atlas" not in texts and "release branch" in texts


def test_exact_duplicate_after_normalisation_is_refused(root):
    first = api.store(root, "Use PostgreSQL 16 for the main database.", "decision")
    again = api.store(root, "  use postgresql 16 for the MAIN database ", "fact")
    assert again["status"] == "refused"
    assert first["id"] in again["message"]
    assert len(api.entries(root, "project")) == 1


def test_near_duplicate_that_adds_detail_is_merged(root):
    first = api.store(root, "Integration tests must not call the network", "constraint")
    merged = api.store(root, "Integration tests must not call the network or the clock", "constraint")
    assert merged["status"] == "merged"
    assert merged["id"] == first["id"]
    [entry] = api.entries(root, "project")
    assert entry.text.endswith("or the clock")


def test_near_duplicate_without_new_detail_is_refused_naming_the_entry(root):
    first = api.store(root, "The release script tags the commit and pushes the wheel to PyPI", "fact")
    refused = api.store(root, "release script tags commit, pushes wheel to PyPI", "fact")
    assert refused["status"] == "refused"
    assert f"[{first['id']}]" in refused["message"]


def test_different_memories_are_both_stored(root):
    api.store(root, "Never use SQLite in production", "constraint")
    other = api.store(root, "Use SQLite for the local test fixtures", "decision")
    assert other["status"] == "stored"
    assert len(api.entries(root, "project")) == 2


def test_forget_by_id_and_by_query_with_confirmation(root):
    keep = api.store(root, "Deploys go through the staging cluster first", "constraint")
    drop = api.store(root, "The cache key includes the tenant id", "gotcha")
    asked = api.forget(root, "tenant cache key", yes=False)
    assert asked["status"] == "confirm"
    assert [match["id"] for match in asked["matches"]] == [drop["id"]]
    assert len(api.entries(root, "project")) == 2
    done = api.forget(root, "tenant cache key", yes=True)
    assert done["forgotten"] == [drop["id"]]
    assert api.forget(root, f"[{keep['id']}]")["forgotten"] == [keep["id"]]
    assert api.entries(root, "project") == []


@pytest.mark.parametrize(
    ("text", "message"),
    [("", "empty"), ("   \n ", "empty"), ("a\x00b", "control"), ("x" * 1_000_000, "limit")],
)
def test_bad_text_is_refused_and_nothing_is_written(root, text, message):
    with pytest.raises(InputError, match=message):
        api.store(root, text)
    assert not (root / ".deep-memory" / "MEMORY.md").exists()


def test_scopes_are_separate_files(root, global_root):
    api.store(root, "Global: prefer ripgrep over grep", "decision", scope="global")
    api.store(root, "Project: the API lives in src/api", "fact")
    assert "ripgrep" in (global_root / "MEMORY.md").read_text()
    assert "ripgrep" not in memory_md(root)
    assert {entry.scope for entry in api.entries(root, "all")} == {"project", "global"}
    assert [hit["scope"] for hit in api.search(root, "ripgrep", 1)] == ["global"]


def test_project_dir_name_comes_from_the_environment(root, monkeypatch):
    monkeypatch.setenv("DEEP_MEMORY_PROJECT_SUBDIR", ".memory-here")
    api.store(root, "Stored under the renamed folder", "fact")
    assert (root / ".memory-here" / "MEMORY.md").is_file()


def test_concurrent_writers_lose_nothing(root, global_root):
    script = (
        "import sys\nfrom deepmem.memory import api\nfrom deepmem.project.folder import Project\n"
        "project = Project.load(sys.argv[1])\n"
        "for n in range(15):\n"
        "    words = ' '.join(f'{sys.argv[2]}{n}w{i}' for i in range(4))\n"
        "    assert api.store(project, f'{sys.argv[2]} wrote memory {n}: {words}', 'fact')['status'] == 'stored'\n"
    )
    writers = [subprocess.Popen([sys.executable, "-c", script, str(root), name]) for name in ("alpha", "beta")]
    assert [writer.wait(timeout=120) for writer in writers] == [0, 0]
    texts = {entry.text for entry in api.entries(root, "project")}
    assert len(texts) == 30


# Hand edits and broken lines


def test_hand_edit_is_picked_up_on_the_next_search(root):
    stored = api.store(root, "The staging database is called atlas", "fact")
    assert api.search(root, "atlas", 1)[0]["id"] == stored["id"]
    path = root / ".deep-memory" / "MEMORY.md"
    edited = path.read_text().replace("called atlas", "called borealis")
    path.write_text(edited + "\n## Decisions\n\n- Release every second Tuesday\n")
    hits = api.search(root, "borealis staging database", 1)
    assert hits[0]["id"] == stored["id"] and "borealis" in hits[0]["text"]
    assert api.search(root, "when do we release", 1)[0]["text"] == "Release every second Tuesday"


def test_broken_lines_are_skipped_with_a_warning_and_kept(root, caplog):
    api.store(root, "Logs rotate daily at midnight UTC", "fact")
    path = root / ".deep-memory" / "MEMORY.md"
    path.write_text(path.read_text() + "this line lost its dash\n## Mysteries\n- [x1] () what is this\n")
    with caplog.at_level(logging.WARNING, logger="deepmem.memory"):
        hits = api.search(root, "log rotation", 3)
    assert [hit["text"] for hit in hits] == ["Logs rotate daily at midnight UTC"]
    lines = path.read_text().splitlines()
    broken = lines.index("this line lost its dash") + 1
    assert f"MEMORY.md:{broken}: not a `- [id] (time) text` entry" in caplog.text
    assert "unknown section heading" in caplog.text
    api.store(root, "Backups are kept for 30 days", "fact")
    text = path.read_text()
    for kept in ("this line lost its dash", "## Mysteries", "- [x1] () what is this"):
        assert kept in text
    assert len(api.entries(root, "project")) == 2


def test_markdown_round_trip_keeps_multiline_text():
    parsed = parse_markdown(
        "# Memory\n\n## Facts\n\n- [a1] (2024-01-01) first line\n    indented code\n  second line\n"
    )
    [entry] = parsed.entries
    assert entry.text == "first line\n  indented code\nsecond line"
    assert parse_markdown(render_markdown(parsed.entries)).entries == parsed.entries


# Search


CHINESE = [
    ("decision", "我们决定使用 Redis 作为会话缓存，过期时间设为三十分钟。"),
    ("constraint", "每次发布之前都必须先运行数据库迁移脚本。"),
    ("fact", "数据库连接池的最大连接数设置为五十。"),
    ("gotcha", "src/auth/user_service.py 里的 getUserName 会缓存结果五分钟。"),
    ("decision", "The frontend is written in TypeScript with React 18."),
    ("fact", "Nightly builds upload coverage reports to the internal dashboard."),
]


@pytest.fixture
def mixed_store(root):
    return {text: api.store(root, text, kind)["id"] for kind, text in CHINESE}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("会话缓存用的是什么", CHINESE[0][1]),
        ("发布前需要做什么", CHINESE[1][1]),
        ("连接池最多多少个连接", CHINESE[2][1]),
        ("getUserName 缓存多久", CHINESE[3][1]),
        ("user_service.py 的缓存", CHINESE[3][1]),
        ("前端用 React 还是 Vue", CHINESE[4][1]),
        ("where do coverage reports go", CHINESE[5][1]),
    ],
)
def test_chinese_english_and_code_queries_find_their_entry(root, mixed_store, query, expected):
    assert api.search(root, query, 1)[0]["id"] == mixed_store[expected]


def test_explain_shows_terms_similarity_and_ranks(root, mixed_store):
    [hit] = api.search(root, "getUserName cache", 1, explain=True)
    why = hit["explain"]
    assert hit["id"] == mixed_store[CHINESE[3][1]]
    assert "getusername" in why["terms"] and why["terms"]["getusername"] > 0
    assert why["bm25_rank"] == 1
    assert -1.0 <= why["similarity"] <= 1.0 and why["similarity_rank"] >= 1


def test_search_rejects_empty_and_control_queries(root, mixed_store):
    for query in ("", "   ", "bad\x07query"):
        with pytest.raises(InputError):
            api.search(root, query)


def test_empty_store_and_unknown_text_do_not_fail(root):
    assert api.search(root, "anything at all") == []
    api.store(root, "Only one memory here", "fact")
    hits = api.search(root, "🙂🙂🙂", 3)
    assert all(np.isfinite(hit["score"]) for hit in hits)


def test_model_comes_from_config_toml_next_to_the_compress_settings(root, monkeypatch):
    monkeypatch.delenv("DEEPMEM_TAIL_STEPS", raising=False)
    config = root / ".deep-memory" / "config.toml"
    config.parent.mkdir()
    config.write_text('[memory]\nmodel = "org/other-model"\n\n[compress]\ntail_steps = 7\n')
    assert model_name(Project.load(root)) == "org/other-model"
    assert load_settings(root).tail_steps == 7
    config.write_text("[memory]\nmodel = 3\n")
    with pytest.raises(ConfigError, match="model must be a string"):
        Project.load(root)
    config.write_text("memory = 3\n")
    with pytest.raises(ConfigError, match=r"\[memory\] must be a table"):
        Project.load(root)
    config.write_text("[memory\n")
    with pytest.raises(ConfigError, match="config.toml"):
        Project.load(root)


def test_zero_vectors_are_guarded():
    vectors = encode(str(DEFAULT_MODEL), ["", "🙂", "a real sentence"])
    assert np.isfinite(vectors).all()
    assert not vectors[0].any() and not vectors[1].any()
    assert abs(np.linalg.norm(vectors[2]) - 1.0) < 1e-5


def test_cold_import_loads_no_search_libraries():
    code = "import sys, deepmem.memory.api; print(sorted({'jieba','model2vec','numpy','rank_bm25'} & set(sys.modules)))"
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert output.strip() == "[]"


def clustered_rows(count=3_000, groups=40, seed=5):
    """Unit rows drawn around `groups` directions, like embeddings of related texts."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(groups, 64))
    rows = centres[rng.integers(0, groups, count)] + 1.5 * rng.normal(size=(count, 64))
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def test_similarity_moments_are_exact_without_scoring_every_row():
    rows = clustered_rows()
    table = VectorTable(rows)
    query = rows[7]
    mean, deviation = table.moments(query)
    assert mean == pytest.approx(float((rows @ query).mean()), abs=1e-5)
    assert deviation == pytest.approx(float((rows @ query).std()), abs=1e-5)


def test_clustered_shortlist_scores_a_share_of_the_rows_and_finds_the_nearest(monkeypatch):
    monkeypatch.setattr(vectors, "EXACT_LIMIT", 1_000)
    rows = clustered_rows()
    table = VectorTable(rows)
    assert table.centroids is not None
    np.testing.assert_allclose(table.everything(rows[11]), rows @ rows[11], atol=1e-5)
    found = 0
    for probe in range(0, 3_000, 60):
        docs, sims = table.shortlist(rows[probe])
        assert len(docs) < len(rows) / 2 and len(set(docs.tolist())) == len(docs)
        np.testing.assert_allclose(sims, rows[docs] @ rows[probe], atol=1e-5)
        exact_top = set(np.argsort(-(rows @ rows[probe]))[:10].tolist())
        found += len(exact_top & set(docs[np.argsort(-sims)[:10]].tolist()))
    assert found / (50 * 10) >= 0.95


def test_clustered_search_ranks_like_the_exact_one(root, mixed_store, monkeypatch):
    files = [read_memory_file(memory_path(root, "project"), "project")]
    index = SearchIndex(files, model_name(root))
    queries = ["会话缓存用的是什么", "getUserName 缓存多久", "where do coverage reports go", "React frontend"]
    exact = [[hit.entry.id for hit in rank(index, query, 3)] for query in queries]
    monkeypatch.setattr(vectors, "EXACT_LIMIT", 0)
    index.vectors = VectorTable(index.vectors.rows)
    assert index.vectors.centroids is not None
    assert [[hit.entry.id for hit in rank(index, query, 3)][0] for query in queries] == [ids[0] for ids in exact]


def test_index_cache_is_written_and_reused(root, mixed_store):
    api.search(root, "Redis", 1)
    index = root / ".deep-memory" / "index"
    assert (index / "tokens.msgpack").is_file()
    assert list(index.glob("vectors-*.npy"))
    assert (index / ".gitignore").read_text() == "*\n"


# Injection


def test_stable_block_is_deterministic_and_holds_constraints_and_decisions(root):
    api.store(root, "All timestamps are stored in UTC", "constraint")
    api.store(root, "We chose FastAPI over Flask for async support", "decision")
    api.store(root, "The CI cache sometimes goes stale", "gotcha")
    api.store(root, "Never commit secrets to the repo", "constraint", scope="global")
    block = api.stable_block(root)
    assert block == api.stable_block(root)
    assert "All timestamps are stored in UTC" in block and "FastAPI" in block
    assert re.search(r"\(global, \d{4}-\d\d\) Never commit secrets", block)
    assert "CI cache" not in block
    assert "memory_search" not in block and "deep_expand" not in block  # the tool schemas say what the tools do
    assert block.index("timestamps") < block.index("FastAPI")


def test_stable_block_stays_under_its_budget(root):
    for n in range(300):
        api.store(root, f"Constraint number {n}: module m{n} must never import module q{n * 13}", "constraint")
    block = api.stable_block(root)
    assert estimate_tokens(block) <= STABLE_BUDGET_TOKENS
    assert "more stored; memory_search finds them" in block


def test_whisper_only_for_relevant_memories(root):
    assert api.whisper(root, "how do we deploy") is None
    api.store(root, "Deploys go through the staging cluster before production", "constraint")
    block = api.whisper(root, "Can I deploy straight to production?")
    assert block is not None and "staging cluster" in block
    assert api.whisper(root, "what is the capital of Peru") is None
    assert api.whisper(root, "") is None


def test_whisper_min_score_setting_quiets_the_whisper(root, monkeypatch):
    """With no score threshold (the default) a relevant memory is whispered; above its score it is not."""
    api.store(root, "Deploys go through the staging cluster before production", "constraint")
    api.store(root, "The docs site is built with mkdocs", "fact")
    query = "Can I deploy straight to production?"
    [hit] = api.whisper_hits(root, query)
    assert "staging cluster" in hit.entry.text
    assert api.whisper_hits(root, query, hit.score) == [hit]
    assert api.whisper_hits(root, query, hit.score + 0.01) == []
    (root / ".deep-memory" / "config.toml").write_text(f"[memory]\nwhisper_min_score = {hit.score + 0.01}\n")
    assert api.whisper(Project.load(root), query) is None
    monkeypatch.setenv("DEEPMEM_MEMORY_WHISPER_MIN_SCORE", str(hit.score - 0.01))
    assert "staging cluster" in (api.whisper(Project.load(root), query) or "")


def test_format_hits_is_compact_text(root, mixed_store):
    text = api.format_hits(api.search(root, "Redis 会话缓存", 2))
    assert text.startswith("2 memories:")
    assert "Redis" in text
    assert api.format_hits([]) == "No stored memory matches."


def test_add_note_appends_to_notes_md(root):
    api.add_note(root, "User said: never force-push to main", "nudge")
    api.add_note(root, "User said: never force-push to main", "nudge")
    [note] = api.notes(root)
    assert note["text"] == "User said: never force-push to main"
    assert note["time"].endswith("· nudge")
    assert "force-push" not in api.stable_block(root)


def test_ages_reach_the_model_but_not_the_stable_block(root):
    """Whisper and search results say how old a memory is; the stable block holds only its month."""
    from datetime import UTC, datetime

    path = root / ".deep-memory" / "MEMORY.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# Memory\n\n## Constraints\n\n- [d1] (2026-01-01T10:00Z) Deploys go through the staging cluster\n")
    now = datetime(2026, 1, 22, 10, 0, tzinfo=UTC)
    assert "(3 weeks ago) Deploys" in api.whisper(root, "can I deploy to the staging cluster?", now)
    assert "3 weeks ago" in api.format_hits(api.search(root, "staging cluster"), now)
    block = api.stable_block(root)
    assert "- [d1] (2026-01) Deploys" in block and "ago" not in block


def test_context_links_and_boost():
    """Neighbours with the same time lend their score (halved two places away); others lend nothing."""
    from deepmem.memory.entries import Entry
    from deepmem.memory.index import context_links
    from deepmem.memory.search import context_boost

    times = ["t1", "t1", "t1", "t2", ""]
    links = context_links([Entry(str(n), "fact", "x", time) for n, time in enumerate(times)])
    assert [link.tolist() for link in links] == [[True, True, False, False], [True, False, False]]
    boost = context_boost(np.array([2.0, 0.0, -1.0, 5.0, 5.0]), links)
    assert boost.tolist() == [0.0, 2.0, 1.0, 0.0, 0.0]


def test_a_question_finds_the_answer_through_the_turn_that_asked_it(root, monkeypatch):
    """A reply that shares no word with the query ranks next to the turn it answers (not without context)."""
    from deepmem.memory import search
    from deepmem.memory.entries import Entry

    turns = ["Mel: which city did Caroline move to last spring?", "Ann: Lisbon, by the river.",
             "Mel: the weather here is grey again.", "Caroline: my cat learned a new trick.",
             "Mel: I am painting a sunset over the lake."]
    import_entries(root, [Entry(f"t{n}", "fact", text, "8 May, 2023") for n, text in enumerate(turns)])
    for weight in ("LABEL_WEIGHT", "QUESTION_WEIGHT", "FEEDBACK_WEIGHT"):  # the context alone
        monkeypatch.setattr(search, weight, 0.0)
    ids = [hit.entry.id for hit in api.ranked(root, "Where did Caroline move?", 2, "project")]
    assert ids == ["t0", "t1"]
    monkeypatch.setattr(search, "CONTEXT_WEIGHT", 0.0)
    assert [hit.entry.id for hit in api.ranked(root, "Where did Caroline move?", 2, "project")][1] != "t1"
