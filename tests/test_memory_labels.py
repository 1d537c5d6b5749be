"""Leading names: entries that start with `Name:` and queries that name it."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepmem.memory import api
from deepmem.memory.entries import Entry
from deepmem.memory.labels import Labels, leading_name, query_names
from deepmem.memory.store import import_entries


@pytest.mark.parametrize(("text", "name"), [
    ("Caroline: I went to the support group", "Caroline"),
    ("Alice Smith: the build is green", "Alice Smith"),
    ("caroline: lowercase is no name", ""),
    ("Note that: a lowercase word breaks the name", ""),
    ("see http://example.com: nothing", ""),
    ("No colon here", ""),
])
def test_leading_name(text: str, name: str) -> None:
    """Only one to three capitalised words followed by a colon at the start are a leading name."""
    assert leading_name(text) == name


def test_query_names_drop_possessives_and_keep_sub_runs() -> None:
    """'Caroline's' names Caroline; a run of capitalised words gives each sub-run."""
    assert "Caroline" in query_names("What is Caroline's identity?")
    assert {"Alice", "Smith", "Alice Smith"} <= query_names("Where did Alice Smith go?")
    assert "note" not in query_names("what does the note say")


def test_labels_match_only_named_entries() -> None:
    """Entries of the named speaker match; the other speaker's and unlabelled entries do not."""
    labels = Labels([Entry("1", "fact", "Caroline: hi"), Entry("2", "fact", "Melanie: hello"),
                     Entry("3", "fact", "plain note")])
    assert labels.matches("What did Caroline say?").tolist() == [1.0, 0.0, 0.0]
    assert not labels.matches("what did anyone say").any()


def test_the_named_speaker_outranks_the_other(tmp_path: Path) -> None:
    """Both speakers talk about painting; asking about Melanie's painting puts her turn first."""
    import_entries(tmp_path, [
        Entry("c", "fact", "Caroline: I love painting sunsets by the lake", "2023-05-08T10:00Z"),
        Entry("m", "fact", "Melanie: painting is fun, I did one last week", "2023-05-08T10:00Z"),
    ])
    assert api.ranked(tmp_path, "What did Melanie say about painting sunsets by the lake?", 2,
                      "project")[0].entry.id == "m"
