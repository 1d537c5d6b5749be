"""The one vocabulary of decisions, constraints and fixes, in English and Chinese: which reader finds what."""

from __future__ import annotations

import pytest

from deepmem.phrasing import ASSISTANT_CONSTRAINT, DECISION, KEY_SENTENCE, NUDGE_PATTERNS, USER_CONSTRAINT

SENTENCES = [
    ("I'll use orjson for the cache files.", {"nudge:decision", "decision"}),
    ("We decided to keep the CLI flat.", {"nudge:decision", "decision", "key"}),
    ("Let's go with SQLite for the index.", {"decision"}),
    ("The best approach is to cache the parsed tree.", {"decision"}),
    ("We must not touch the public API.", {"nudge:constraint", "user_constraint", "assistant_constraint", "key"}),
    ("Never commit the generated files.", {"nudge:constraint", "user_constraint", "assistant_constraint", "key"}),
    ("Make sure the tests pass before pushing.", {"user_constraint"}),
    ("You cannot call the network from tests.", {"user_constraint"}),
    ("Do not modify the migrations.", {"user_constraint", "assistant_constraint"}),
    ("The fix was to close the file handle.", {"nudge:fix", "key"}),
    ("The root cause is a stale lock file.", {"nudge:fix", "key"}),
    ("It fails because the path is relative.", {"key"}),
    ("Instead of copying, we link the file.", {"key"}),
    ("I read the file and ran the tests.", set()),
    ("The output looks fine.", set()),
    ("Should I use the cache here?", set()),
    ("我决定使用 Redis 作为缓存。", {"nudge:decision", "decision", "key"}),
    ("我们采用 BM25 做检索。", {"nudge:decision", "decision"}),
    ("方案是先解析再缓存。", {"decision"}),
    ("不要修改公共接口。", {"nudge:constraint", "user_constraint", "assistant_constraint", "key"}),
    ("必须先运行测试。", {"nudge:constraint", "user_constraint", "assistant_constraint", "key"}),
    ("只能修改 src 目录下的文件。", {"user_constraint", "assistant_constraint"}),
    ("一定要保留注释。", {"user_constraint"}),
    ("修复了路径拼接的问题。", {"nudge:fix", "key"}),
    ("根本原因是锁文件没有释放。", {"nudge:fix", "key"}),
    ("出错的原因是路径不对。", {"key"}),
    ("我看了一下文件内容。", set()),
    ("测试都通过了。", set()),
]


def readers_finding(sentence: str) -> set[str]:
    """Which readers find the sentence: the nudge (by kind), the extractors (lowercased), the prose compressor."""
    found = {f"nudge:{kind}" for kind, pattern, _ in NUDGE_PATTERNS if pattern.search(sentence)}
    lowered = sentence.lower()
    extractors = {"decision": DECISION, "user_constraint": USER_CONSTRAINT, "assistant_constraint": ASSISTANT_CONSTRAINT}
    found |= {name for name, pattern in extractors.items() if pattern.search(lowered)}
    return found | ({"key"} if KEY_SENTENCE.search(sentence) else set())


@pytest.mark.parametrize(("sentence", "expected"), SENTENCES)
def test_each_reader_finds_its_kinds(sentence: str, expected: set[str]) -> None:
    """English and Chinese choices, rules and fixes reach the readers meant for them; narration reaches none."""
    assert readers_finding(sentence) == expected


@pytest.mark.parametrize(("sentence", "expected"), SENTENCES)
def test_every_nudge_match_holds_an_anchor(sentence: str, expected: set[str]) -> None:
    """The nudge searches only lines holding one of a kind's anchors: every match holds one."""
    for _, pattern, anchors in NUDGE_PATTERNS:
        for match in pattern.finditer(sentence):
            assert any(anchor in match.group(0).lower() for anchor in anchors)
