"""A fast token estimate, calibrated against exact o200k counts (see `bench/runners/estimator.py`).

No tokenizer at runtime: a linear formula over counts of character classes that the
o200k pre-tokenizer treats differently (ASCII words, letters, digits, punctuation,
newlines, runs of spaces, repeated punctuation such as `....` or `====` that merges into
few tokens, backslashes of escaped JSON, CJK and other non-ASCII characters). Each count is one pass in
C (`bytes.translate`, `bytes.count`), so estimating is cheap on large outputs.
The weights are hundredths of a token, fitted on the swe-gemini3 corpus; CJK and other
non-ASCII weights come from sample text, since that corpus has almost none.
"""

from __future__ import annotations

import re
from functools import lru_cache

_CJK = re.compile("[\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]")
_CJK_LEADS = bytes(range(0xE3, 0xF0))
"""The UTF-8 lead bytes of U+3000–U+FFFF, where every CJK range above lies."""
_NOT_CJK_LEADS = bytes(byte for byte in range(256) if byte not in _CJK_LEADS)
_DIGITS = b"0123456789"
_ALNUM_SPACE = _DIGITS + b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz \n\t\r"
_LETTERS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_MERGING_PUNCTUATION = b".=-#*~_+/^"
_SHAPE = bytes(
    ord("a") if byte in _LETTERS else ord("P") if byte in _MERGING_PUNCTUATION else ord(" ")
    for byte in range(256)
)
"""Maps letters to `a`, punctuation that merges when repeated to `P`, the rest to a space."""

# Weights in hundredths of a token.
PER_WORD = 78
PER_LETTER = 6
PER_DIGIT = 107
PER_PUNCTUATION = 49
PER_NEWLINE = 102
PER_DOUBLE_SPACE = 9
PER_REPEATED_PAIR = -72
PER_BACKSLASH = 38
PER_CJK = 68
PER_OTHER_NON_ASCII = 35
PER_TEXT = 96


def tokens_at_least(text: str) -> int:
    """A lower bound of `estimate_tokens(text)` from its newlines alone (one C pass).

    Every other term of the formula adds a non-negative amount: a pair of repeated
    punctuation takes off less than its two punctuation characters add.
    """
    return max(1, (PER_NEWLINE * text.count("\n") + PER_TEXT + 50) // 100) if text else 0


MEMO_CHARS = 512
"""Texts at least this long are estimated once (memoized): a compressor weighs an output that
the plan measured already, and hashing is one pass where the formula takes a dozen."""
MEMO_TEXTS = 4_096
"""How many long texts the memo holds. It keeps them alive, but nearly all of them are alive
anyway: the history holds the originals and the transform's memos their compressed forms."""


def estimate_tokens(text: str) -> int:
    """Estimated o200k tokens of a text (within ±15% on the corpus; 0 for '')."""
    return estimate_long(text) if len(text) >= MEMO_CHARS else estimate_text(text)


@lru_cache(maxsize=MEMO_TEXTS)
def estimate_long(text: str) -> int:
    """`estimate_text`, memoized for long texts."""
    return estimate_text(text)


CASE_HUMP = re.compile(r"[a-z][A-Z]")
"""A lower-case letter followed by a capital: o200k starts a new piece there (`accumulatedToAgentFiles` is four
or more tokens), which the formula, fitted on snake_case Python, does not count."""
PUNCTUATION_AFTER_PUNCTUATION = re.compile(r"(?<=[^\w\s])[^\w\s.=\-#*~_+/^]")
"""Punctuation right after punctuation, but the kinds that merge when repeated: a run such as `="(` or `{1,3})"`
is mostly one token a character, where the formula counts half a token."""


BOX_DRAWING = re.compile(r"[\u2500-\u25ff]")
"""Box lines and geometric shapes (`├──`, `│`, `●`): a token a character or more, where the formula counts less."""


def tokens_for_cap(text: str) -> int:
    """`estimate_tokens` plus one token per case hump, half a token per punctuation character in a run and one per
    box-drawing character: what a cap in the model's tokens is checked against.

    Text full of camelCase code names and quoted commands, as a checkpoint is, counts up to 27% above the plain
    estimate, and at most 14% above this one, on the checkpoints and resume blocks of every session of the seven
    corpora (`deepmem.checkpoints.render.ESTIMATE_ERROR`)."""
    runs = len(PUNCTUATION_AFTER_PUNCTUATION.findall(text))
    boxes = len(BOX_DRAWING.findall(text)) if not text.isascii() else 0
    return estimate_tokens(text) + len(CASE_HUMP.findall(text)) + (runs + 1) // 2 + boxes


def cjk_count(text: str) -> int:
    """CJK characters in a text. The pattern runs only when the text's UTF-8 holds a lead byte
    of U+3000–U+FFFF (one C pass; most non-ASCII outputs hold arrows and box lines, below)."""
    if not text.encode("utf-8", "surrogatepass").translate(None, _NOT_CJK_LEADS):
        return 0
    return len(_CJK.findall(text))


def estimate_text(text: str) -> int:
    """The formula itself (see `estimate_tokens`)."""
    if not text:
        return 0
    if text.isascii():
        data, cjk, other = text.encode("ascii"), 0, 0
    else:
        data = text.encode("ascii", "ignore")
        cjk = cjk_count(text)
        other = len(text) - len(data) - cjk
    size = len(data)
    punctuation = len(data.translate(None, _ALNUM_SPACE))
    digits = size - len(data.translate(None, _DIGITS))
    newlines = data.count(b"\n")
    shape = data.translate(_SHAPE)
    words = shape.count(b" a") + shape.count(b"Pa") + shape.startswith(b"a")
    letters = shape.count(b"a")
    hundredths = (
        PER_WORD * words
        + PER_LETTER * letters
        + PER_DIGIT * digits
        + PER_PUNCTUATION * punctuation
        + PER_NEWLINE * newlines
        + PER_DOUBLE_SPACE * data.count(b"  ")
        + PER_REPEATED_PAIR * shape.count(b"PP")
        + PER_BACKSLASH * data.count(b"\\")
        + PER_CJK * cjk
        + PER_OTHER_NON_ASCII * other
        + PER_TEXT
    )
    return max(1, (hundredths + 50) // 100)
