"""How decisions, constraints and fixes are phrased, in English and Chinese: one vocabulary.

Three readers ask it, each for the named subset that fits its job:

- the memory nudge (`NUDGE_PATTERNS`) reminds the model to store what was just said: firm
  first-person choices ("I'll use", "我决定"), rules ("must not", "不能") and fixes ("the
  fix is", "修复了"), matched case-insensitively in the original text;
- the checkpoint extractors (`DECISION`, `USER_CONSTRAINT`, `ASSISTANT_CONSTRAINT`) keep
  a checkpoint's Key decisions and Constraints, matched in lowercased sentences: a wider
  set of choices ("stick with", "opted", "方案是"), every rule a user states ("make sure",
  "只能"), and of the assistant, which reasons with "cannot" and "must" all the time, only
  rules about what not to touch;
- the prose compressor (`KEY_SENTENCE`) keeps the sentences of old assistant prose that
  carry a choice, a rule, a fix or a cause: it alone also keeps "because", "instead",
  "error" and "fails", which say why and what went wrong rather than what to remember.

The subsets differ on purpose and share their words: the Chinese rules and the English
prohibitions, choices and fix phrases are each written once below. Every pattern comes
with `anchors` where a reader filters lines first: every match, folded, holds one.
"""

from __future__ import annotations

import re

ZH_CORE_RULES = ("必须", "不能", "不要")
ZH_RULES = (*ZH_CORE_RULES, "不得", "禁止", "务必")
ZH_STRICT_RULES = (*ZH_RULES, "只能", "严禁")
ZH_USER_RULES = (*ZH_STRICT_RULES, "不可以?", "一定要")
ZH_NUDGE_CHOICES = ("我决定", "我们决定", "决定(?:使用|用|采用)", "改用", "采用")
ZH_CHOICES = ("我决定", "决定(?:用|使用|采用|改)", "我们(?:用|采用|选择)", "采用", "改用", "选择了", "就用", "方案是")
ZH_FIXES = ("修复了", "修复方法", "根本原因", "问题在于", "解决了")

FUTURE = ("i'll", "i will", "we'll", "we will", "let's")
"""How a first-person choice opens ("I'll use", "let's use")."""
NOT_ALLOWED = ("is not allowed", "are not allowed", "not permitted")
DONT = ("never", "do not", "don't", "should not", "shouldn't")
FIX_PHRASES = ("fixed by", "the fix (?:is|was)", "root cause (?:is|was)", "fixed (?:it|this|the \\w+) (?:by|with)",
               "resolved by", "the problem was")


def alternatives(*groups: tuple[str, ...]) -> str:
    """The phrases of several groups as one regex alternation (in order)."""
    return "|".join(phrase for group in groups for phrase in group)


NUDGE_PATTERNS: tuple[tuple[str, re.Pattern[str], tuple[str, ...]], ...] = (
    (
        "decision",
        re.compile(
            rf"(?i)\b(?:(?:{alternatives(FUTURE)}) use|I(?:'ve)? decided|we(?:'ve)? decided|"
            rf"decided to|going with|we chose|I chose|switch(?:ing)? to)\b|{alternatives(ZH_NUDGE_CHOICES)}"
        ),
        ("ll use", "let's use", "decided", "going with", "chose", "switch", "决定", "改用", "采用"),
    ),
    (
        "constraint",
        re.compile(
            r"(?i)\b(?:we|you|I) (?:must|should) (?:not|never)\b|\bmust not\b|\bmustn't\b|\bnever (?:use|commit|"
            r"call|edit|change|touch|push)\b|\bdo not (?:use|commit|change|touch|edit)\b|\balways (?:use|run)\b|"
            + alternatives(ZH_RULES)
        ),
        ("must", "should", "never", "do not", "always", *ZH_RULES),
    ),
    (
        "fix",
        re.compile(rf"(?i)\b(?:{alternatives(FIX_PHRASES)})\b|{alternatives(ZH_FIXES)}"),
        ("fixed ", "the fix ", "root cause", "resolved by", "problem was", "修复", "根本原因", "问题在于", "解决了"),
    ),
)
"""The memory nudge's kinds: per kind its pattern, and its anchors."""

DECISION = re.compile(
    r"(?=[iwldgtm我决采改选就方])"  # a first-letter check first: 2-3× faster on long texts
    rf"(?:\b(?:{alternatives(FUTURE)}|i am going to|i'm going to)\s+(?:use|go with|switch to|stick with|"
    r"adopt|rely on)\b"
    r"|\b(?:i|we)\s+(?:have\s+|'ve\s+)?(?:decided|chose|opted|settled on)\b|\bdecided to\b|\bdecision:"
    r"|\bgoing with\b|\bthe (?:best|right|cleanest|correct) (?:fix|approach|way) is\b|\bthe fix is to\b|\bmy approach\b"
    rf"|{alternatives(ZH_CHOICES)})"
)
"""A checkpoint's decisions, in lowercased sentences. Bare "instead of" describes far more often than it decides."""

USER_CONSTRAINT = re.compile(
    r"(?=[mndscaeiomr不必禁务只一严])"  # a first-letter check first: faster on long texts
    rf"(?:\b(?:must(?:\s+not|n't)?|{alternatives(DONT)}|cannot|can't|may not|{alternatives(NOT_ALLOWED)}|"
    r"is required|are required|required to|make sure|ensure that|avoid|only (?:modify|change|edit|use|touch))\b"
    rf"|{alternatives(ZH_USER_RULES)})"
)
"""Every rule a user states, in lowercased sentences."""

ASSISTANT_CONSTRAINT = re.compile(
    r"(?=[mianpnds不必禁务只严])"
    rf"(?:\b(?:must not|must never|mustn't|{alternatives(NOT_ALLOWED)}|"
    rf"(?:{alternatives(DONT)}) (?:modify|change|edit|touch|use|delete|remove|commit|push|break|rename|add))\b"
    rf"|{alternatives(ZH_STRICT_RULES)})"
)
"""The assistant reasons with "cannot" and "must" all the time: only rules count for it."""

KEY_SENTENCE = re.compile(
    r"(?i)\b(?:decided?|instead|must|should not|shouldn't|never|root cause|the fix|fixed|"
    r"the (?:issue|problem|bug|cause) (?:is|was)|because|fails?|failed|error)\b"
    rf"|决定|{alternatives(ZH_CORE_RULES)}|修复|原因"
)
KEY_SENTENCE_ANCHORS = (
    "decide", "instead", "must", "should", "never", "root cause", "the fix", "fixed", "the issue", "the problem",
    "the bug", "the cause", "because", "fail", "error", "决定", *ZH_CORE_RULES, "修复", "原因",
)
"""A sentence of old prose worth keeping, and its anchors."""

REPORT_FINDING = re.compile(r"(?i)\b(?:decided|conclusion|root cause|fixed|must|should not|recommend)\b")
"""A line of a subagent's report that states what it found or decided."""
