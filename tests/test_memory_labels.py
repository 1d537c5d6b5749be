"""Leading names, questions and feedback words in search."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from deepmem.memory import api
from deepmem.memory.entries import Entry
from deepmem.memory.feedback import feedback_scores, feedback_terms
from deepmem.memory.labels import Labels, asks, leading_name, query_names
from deepmem.memory.lexical import Lexical
from deepmem.memory.store import import_entries
from deepmem.project.folder import Project


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
    import_entries(Project.load(tmp_path), [
        Entry("c", "fact", "Caroline: I love painting sunsets by the lake", "2023-05-08T10:00Z"),
        Entry("m", "fact", "Melanie: painting is fun, I did one last week", "2023-05-08T10:00Z"),
    ])
    assert api.ranked(Project.load(tmp_path), "What did Melanie say about painting sunsets by the lake?", 2,
                      "project")[0].entry.id == "m"


@pytest.mark.parametrize(("text", "asked"), [
    ("Caroline: How is the painting going? (image: a painted sunset)", True),
    ("Melanie: It is going great.", False),
    ("Why does the build fail on Windows?", True),
    ("数据库用哪个？", True),
    ("Is it fast? It is.", False),
])
def test_asks(text: str, asked: bool) -> None:
    """A question (a trailing parenthesis aside) asks; a statement, even after a question, tells."""
    assert asks(text) is asked


def test_feedback_terms_are_the_rarest_words_of_the_first_hits() -> None:
    """Words of the top entries by idf summed over them (ties by name), without skipped, short or digit words."""
    tokens = [["violin", "orchestra", "play"], ["orchestra", "clarinet"], ["play", "bread"], ["play", "x1"]]
    lexical = Lexical(tokens)
    assert feedback_terms(lexical, tokens, np.array([0, 1]), {"play"}) == ["orchestra", "clarinet", "violin"]
    scores = feedback_scores(lexical, ["clarinet"])
    assert scores.argmax() == 1 and scores[1] > 0 > scores[2]
    assert not feedback_scores(lexical, []).any()


def test_feedback_lifts_an_entry_that_shares_the_first_hits_words(tmp_path: Path, monkeypatch) -> None:
    """An entry with no query word but the best hits' rare words gains on an unrelated one with feedback."""
    from deepmem.memory import search

    texts = ["the orchestra rehearsal on tuesday went long", "my violin and clarinet teacher praised the rehearsal",
             "violin clarinet oboe bassoon", "we baked bread on sunday", "the garden needs water",
             "the car needs new tyres", "a long walk by the river", "tuesday is the market day"]
    import_entries(Project.load(tmp_path), [Entry(str(n), "fact", text) for n, text in enumerate(texts)])

    def lead(weight: float) -> float:
        monkeypatch.setattr(search, "FEEDBACK_WEIGHT", weight)
        scores = {hit.entry.id: hit.score for hit in api.ranked(Project.load(tmp_path), "how was the orchestra rehearsal", 8,
                                                                  "project")}
        return scores["2"] - scores["3"]

    assert lead(1.0) > lead(0.0) + 0.5
