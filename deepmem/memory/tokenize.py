"""Search tokens for code, English and CJK text.

Code identifiers are split (camelCase, snake_case, dotted and slashed paths) and also kept
whole; English words are lowercased and lightly stemmed, with a few stop words dropped;
runs of Chinese go through jieba (imported only when Chinese text appears) and also give
character bigrams; kana and hangul runs give bigrams.
"""

from __future__ import annotations

import re
import unicodedata

import xxhash

TOKENIZER_VERSION = "1"
"""Bumped whenever tokens for the same text may change (cached token lists are dropped)."""

CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af]+")
HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
WORD = re.compile(r"[^\W_]+(?:[._/:\-\\#@]*[^\W_]+|_+[^\W_]+)*", re.UNICODE)
SPLIT = re.compile(r"[._/:\-\\#@]+")
CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")

STOP_WORDS = frozenset(
    """a an and are as at be been but by did do does for from had has have he her him his how i
    if in into is it its me my of on or our she so than that the their them then there these they
    this those to was we were what when where which who whom why will with would you your""".split()
)

_jieba = None


def _chinese_words(run: str) -> list[str]:
    """jieba's words for a run of Chinese characters (jieba is imported on first use)."""
    global _jieba
    if _jieba is None:
        import logging

        import jieba

        jieba.setLogLevel(logging.WARNING)
        _jieba = jieba
    return [word for word in _jieba.lcut(run) if word.strip()]


def stem(word: str) -> str:
    """A light English stem: plural and -ing/-ed endings; other words are left alone."""
    if not word.isascii() or not word.isalpha() or len(word) <= 3:
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "ss", "us", "is")):
        return word[:-2] if word.endswith("sses") else word
    if word.endswith("s"):
        return word[:-1]
    if word.endswith("ing") and len(word) > 5:
        return word[:-3]
    if word.endswith("ed") and len(word) > 4:
        return word[:-2]
    return word


def _latin_tokens(chunk: str) -> list[str]:
    """Tokens of a chunk without CJK: whole code identifiers plus their parts."""
    tokens: list[str] = []
    for match in WORD.finditer(chunk):
        raw = match.group()
        pieces = [piece for part in SPLIT.split(raw) for piece in part.split("_") if piece]
        parts = [word for piece in pieces for word in CAMEL_BOUNDARY.split(piece)]
        if len(parts) > 1:
            tokens.append(raw.lower())
        for part in parts:
            word = part.lower()
            if word not in STOP_WORDS:
                tokens.append(stem(word))
    return tokens


def _cjk_tokens(run: str) -> list[str]:
    """Character bigrams of one CJK run, plus jieba's longer words when it holds Chinese."""
    if len(run) == 1:
        return [run]
    words = _chinese_words(run) if HAN.search(run) else []
    bigrams = [run[index : index + 2] for index in range(len(run) - 1)]
    return [word for word in words if len(word) > 2] + bigrams


def tokenize(text: str) -> list[str]:
    """Search tokens of a text, in order (duplicates kept: BM25 counts them)."""
    text = unicodedata.normalize("NFKC", text)
    tokens: list[str] = []
    position = 0
    for match in CJK_RUN.finditer(text):
        tokens.extend(_latin_tokens(text[position : match.start()]))
        tokens.extend(_cjk_tokens(match.group()))
        position = match.end()
    tokens.extend(_latin_tokens(text[position:]))
    return tokens


known_tokens: dict[str, list[str]] = {}
"""Token lists by text digest, shared by search and dedup within one process."""


def text_digest(text: str) -> str:
    """The cache key of one text."""
    return xxhash.xxh3_64_hexdigest(text.encode("utf-8", "surrogatepass"))


def cached_tokens(text: str, digest: str | None = None) -> list[str]:
    """Tokens of a text, computed once per process."""
    key = digest or text_digest(text)
    found = known_tokens.get(key)
    if found is None:
        found = known_tokens[key] = tokenize(text)
    return found
