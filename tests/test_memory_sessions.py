"""Sessions and date fields in search; the same insight about other code merged into one entry."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from deepmem.memory import api
from deepmem.memory.age import date_words
from deepmem.memory.consolidate import consolidate
from deepmem.memory.entries import Entry
from deepmem.memory.sessions import Sessions
from deepmem.memory.store import import_entries
from deepmem.project.folder import Project


def test_a_matching_session_lifts_its_entries(tmp_path: Path) -> None:
    """Two turns of a talk about the garden outrank a lone entry that shares one word with the query."""
    import_entries(Project.load(tmp_path), [
        Entry("a1", "fact", "Maria: I planted tomatoes in the garden", "2023-05-08T10:00Z"),
        Entry("a2", "fact", "John: nice, how are they doing", "2023-05-08T10:00Z"),
        Entry("a3", "fact", "Maria: they are doing great, already red", "2023-05-08T10:00Z"),
        Entry("b1", "fact", "John: they are doing a concert tonight", "2023-06-01T10:00Z"),
    ])
    ranked = [hit.entry.id for hit in api.ranked(Project.load(tmp_path), "how are the garden tomatoes doing", 4, "project")]
    assert ranked.index("a3") < ranked.index("b1")


def test_untimed_entries_form_no_session() -> None:
    """Entries without a time (hand-written) belong to no session and gain nothing from one."""
    entries = [Entry(str(n), "fact", f"text {n}") for n in range(3)]
    sessions = Sessions(entries, [["text"]] * 3, np.ones((3, 4), dtype=np.float32))
    assert (sessions.of == -1).all()
    assert not sessions.scores(["text"], np.ones(4, dtype=np.float32), 0.8).any()


@pytest.mark.parametrize("texts", [
    ["数据库必须使用 PostgreSQL", "前端使用 React 框架", "部署在上海机房"],
    ["parse_config()", "HttpClient.retry_after", "src/deepmem/memory/search.py"],
])
def test_one_script_stores_search_with_sessions(tmp_path: Path, texts: list[str]) -> None:
    """A store of only Chinese or only code identifiers, stored at one moment, still ranks its best match first."""
    import_entries(Project.load(tmp_path), [Entry(str(n), "fact", text, "2026-01-02T03:04Z") for n, text in enumerate(texts)])
    assert api.ranked(Project.load(tmp_path), texts[1], 3, "project")[0].entry.id == "1"


def test_a_date_in_the_query_finds_what_was_stored_then(tmp_path: Path) -> None:
    """The time field's words are searchable: 'March 2026' finds the entry stored on 2026-03-05."""
    assert date_words("2026-03-05T10:00Z") == "5 March 2026"
    assert date_words("1:56 pm on 8 May, 2023") == "1:56 pm on 8 May, 2023"
    import_entries(Project.load(tmp_path), [Entry("old", "decision", "use the new release process", "2026-03-05T10:00Z"),
                              Entry("new", "decision", "use the old release process", "2026-07-01T10:00Z")])
    assert api.ranked(Project.load(tmp_path), "release process in March", 1, "project")[0].entry.id == "old"


def test_the_same_insight_about_three_functions_becomes_one_entry() -> None:
    """Three fixes that differ only in the function they name merge into the oldest, which names all three."""
    functions = ["_interval_length", "_infer_freq", "resample_mean"]
    entries = [Entry(f"e{n}", "gotcha", f"Fixed by converting the datetime index to nanoseconds (int64) before "
                     f"`np.diff()` in `{name}`.", f"2026-01-0{n + 1}T10:00Z") for n, name in enumerate(functions)]
    plan = consolidate(entries, 200)
    assert [entry.id for entry in plan.kept] == ["e0"]
    assert all(f"`{name}`" in plan.kept[0].text for name in functions)
    assert consolidate(plan.kept, 200).changes == []
    other = Entry("x", "gotcha", "Fixed by caching the parsed config in `load_settings`.", "2026-01-09T10:00Z")
    assert len(consolidate([*entries, other], 200).kept) == 2


def test_a_missing_model_folder_is_named_and_the_store_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A model folder that does not exist stops the search with its name; MEMORY.md keeps every byte."""
    from deepmem.types import ConfigError

    import_entries(Project.load(tmp_path), [Entry("a", "fact", "keep me", "2026-01-02T03:04Z")])
    before = (tmp_path / ".deep-memory" / "MEMORY.md").read_bytes()
    monkeypatch.setenv("DEEPMEM_MEMORY_MODEL", str(tmp_path / "no-such-model"))
    with pytest.raises(ConfigError, match="no-such-model"):
        api.search(tmp_path, "keep", 3, "project")
    assert (tmp_path / ".deep-memory" / "MEMORY.md").read_bytes() == before
