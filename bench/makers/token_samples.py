"""Write the token-estimator samples that `tests/test_tokens.py` checks, with exact o200k counts.

    python -m bench.makers.token_samples

Samples are cut from the evidence sessions by a fixed rule (per kind of text, the longest
one of each of the first sessions that have it, cut at a line boundary near SAMPLE_CHARS),
plus a few Chinese sentences, so the test needs no tokenizer.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bench.makers.evidence import FIXTURES
from bench.runners.estimator import kind_texts
from bench.tokens_o200k import TokenCounter
from deepmem.vault.sessionio import encode_json, read_session
from deepmem.vault.writer import write_given

SAMPLE_CHARS = 2_000
SESSIONS_PER_KIND = 3
CHINESE = (
    "我们决定使用 PostgreSQL 作为主数据库，因为它支持事务和 JSON 字段。\n"
    "约束：所有的数据库迁移都必须先在测试环境运行，确认没有错误以后才能上线。\n"
    "修复了登录页面的错误：用户名为空时服务器会崩溃，现在会返回 400 并提示用户。\n"
    "下一步：为压缩器补充测试，检查边界移动时旧内容保持不变，缓存命中率不下降。\n"
)
"""Written for the test (the corpus has no Chinese): a decision, a constraint, a fix, a plan."""


def cut(text: str, limit: int = SAMPLE_CHARS) -> str:
    """The text up to the last line break before `limit` characters (or `limit` when none)."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    return head[: head.rfind("\n")] if "\n" in head else head


def samples(folder: Path) -> list[dict[str, str]]:
    """(source, kind, text) per kind from the first sessions that have that kind."""
    taken: dict[str, int] = {}
    found = []
    for path in sorted(folder.glob("*.json")):
        longest: dict[str, str] = {}
        for kind, text in kind_texts(read_session(str(path)).messages):
            if len(text) > len(longest.get(kind, "")):
                longest[kind] = text
        for kind, text in sorted(longest.items()):
            if taken.get(kind, 0) < SESSIONS_PER_KIND and len(text) >= 200:
                taken[kind] = taken.get(kind, 0) + 1
                found.append({"source": path.name, "kind": kind, "text": cut(text)})
    found.append({"source": "written for the test", "kind": "chinese text", "text": CHINESE})
    return found


def main(argv: list[str] | None = None) -> int:
    """Write token-samples.json next to the evidence fixtures."""
    parser = argparse.ArgumentParser(prog="python -m bench.makers.token_samples", description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=FIXTURES / "token-samples.json")
    args = parser.parse_args(argv)
    counter = TokenCounter()
    rows = [row | {"o200k": counter.count(row["text"])} for row in samples(FIXTURES / "sessions")]
    write_given(args.out, encode_json(rows))
    print(f"wrote {len(rows)} samples to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
