"""The token estimator against exact o200k counts stored with committed samples.

The samples (`fixtures/evidence/token-samples.json`) are cut from the evidence sessions
and counted with o200k by `python -m bench.makers.token_samples`; no tokenizer is needed here.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deepmem import tokens as tokens_module
from deepmem.tokens import estimate_tokens, tokens_at_least

from .conftest import FIXTURES

SAMPLES = json.loads((FIXTURES / "evidence" / "token-samples.json").read_text(encoding="utf-8"))
TOLERANCE = 0.15


@pytest.mark.parametrize("sample", SAMPLES, ids=[f"{s['kind']}:{s['source']}" for s in SAMPLES])
def test_estimate_within_tolerance(sample: dict) -> None:
    """Each sample's estimate is within ±15% of its exact o200k count."""
    ratio = estimate_tokens(sample["text"]) / sample["o200k"]
    assert abs(ratio - 1) <= TOLERANCE, f"estimate/o200k = {ratio:.3f}"


def test_samples_cover_every_kind() -> None:
    """Prose, reasoning, user text, tool inputs, outputs and Chinese are all represented."""
    kinds = {sample["kind"] for sample in SAMPLES}
    assert {"assistant text", "assistant reasoning", "user text", "tool input", "tool output", "chinese text"} <= kinds


def test_total_over_samples_is_close() -> None:
    """Over all samples together the estimate is within ±5%."""
    estimated = sum(estimate_tokens(sample["text"]) for sample in SAMPLES)
    exact = sum(sample["o200k"] for sample in SAMPLES)
    assert abs(estimated / exact - 1) <= 0.05


def test_small_texts() -> None:
    """Empty text is 0 tokens; any other text at least 1, and a short phrase only a few."""
    assert estimate_tokens("") == 0
    assert estimate_tokens("x") >= 1
    assert 1 <= estimate_tokens("hello world") <= 4


def test_a_long_text_seen_again_is_answered_by_the_memo_with_the_formula_s_count() -> None:
    """An equal text (another string object) is answered from the memo, with what the formula
    gives; a text of the same length that differs in one character is not."""
    text = next(sample["text"] for sample in SAMPLES if len(sample["text"]) >= tokens_module.MEMO_CHARS)
    tokens_module.estimate_long.cache_clear()
    first = estimate_tokens(text)
    again = estimate_tokens("".join(list(text)))
    assert tokens_module.estimate_long.cache_info().hits == 1
    assert first == again == tokens_module.estimate_text(text)
    changed = text[:-1] + ("x" if text[-1] == "\n" else "\n")
    assert estimate_tokens(changed) == tokens_module.estimate_text(changed) != first


def test_twice_the_text_gives_about_twice_the_tokens() -> None:
    """The estimate grows with the text: a text repeated is about twice its tokens."""
    text = SAMPLES[0]["text"]
    assert 1.9 <= estimate_tokens(text + "\n" + text) / estimate_tokens(text) <= 2.1


@given(st.text(alphabet=st.sampled_from(list("ab9 \t\r\n.=-#*~_+/^\\,;()中é\x00")), max_size=80))
def test_lower_bound_never_exceeds_the_estimate(text: str) -> None:
    """`tokens_at_least` is a true lower bound, repeated punctuation and tabs included."""
    assert tokens_at_least(text) <= estimate_tokens(text)


def counted_by_hand(text: str) -> int:
    """The estimate's formula with each character classed one at a time (pairs counted without
    overlap, as the formula counts them)."""
    data = text.encode("ascii", "ignore").decode()
    cjk = sum(1 for c in text if not c.isascii() and tokens_module._CJK.match(c))
    other = len(text) - len(data) - cjk

    def shape(c: str) -> str:
        return "a" if c.isascii() and c.isalpha() else "P" if c in ".=-#*~_+/^" else " "

    shapes = "".join(shape(c) for c in data)
    hundredths = (
        tokens_module.PER_WORD * (shapes.count(" a") + shapes.count("Pa") + shapes.startswith("a"))
        + tokens_module.PER_LETTER * shapes.count("a")
        + tokens_module.PER_DIGIT * sum(c.isdigit() for c in data)
        + tokens_module.PER_PUNCTUATION * sum(not c.isalnum() and c not in " \n\t\r" for c in data)
        + tokens_module.PER_NEWLINE * data.count("\n")
        + tokens_module.PER_DOUBLE_SPACE * data.count("  ")
        + tokens_module.PER_REPEATED_PAIR * shapes.count("PP")
        + tokens_module.PER_BACKSLASH * data.count("\\")
        + tokens_module.PER_CJK * cjk
        + tokens_module.PER_OTHER_NON_ASCII * other
        + tokens_module.PER_TEXT
    )
    return max(1, (hundredths + 50) // 100) if text else 0


@given(st.text(alphabet=st.sampled_from(list("aZ9 \t\r\n.=-#*~_+/^\\,;()中é\x00→─가！\u2fff\u3000\ufff0\ud800😀")), max_size=1_200))
def test_estimate_is_its_formula_counted_by_hand(text: str) -> None:
    """The C-pass counts (and the memo of long texts) give what counting by hand gives."""
    assert estimate_tokens(text) == counted_by_hand(text) == estimate_tokens(str(text))


@given(st.text(alphabet=st.sampled_from(list("a →─é中가！\u2fff\u3000\u303f\u3400\ufff0\uffef\ud800😀")), max_size=40))
def test_cjk_counted_by_the_pattern_only_where_it_can_match(text: str) -> None:
    """Skipping the pattern for a text with no character of U+3000–U+FFFF finds no fewer."""
    assert tokens_module.cjk_count(text) == len(tokens_module._CJK.findall(text))
