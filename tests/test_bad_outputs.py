"""Outputs that are not what they look like, cut from real sessions (`fixtures/outputs`) or made
of their lines: JSON that is not JSON, binary and one-line files, reads numbered another way.

Each goes through its compressors captured and old at every tier (`run_everywhere`): none
raises, the pipeline counts no failure, and every cut restores exactly.
"""

from __future__ import annotations

import re

import orjson
import pytest

from bench.runners.failures import Seen
from deepmem.compressors import REGISTRY, compressors_for
from deepmem.text.fields import main_text, with_main_text
from deepmem.transform.outcomes import outcome_for, sizes
from deepmem.types import Context, Facts, Part, Settings, Tier

from .conftest import FIXTURES
from .test_real_outputs import run_everywhere

CASES = {
    case["name"]: case["part"]
    for case in orjson.loads((FIXTURES / "outputs" / "real-outputs.json").read_bytes())["cases"]
}
ARROW = re.compile(r"^ *(\d+)→", re.MULTILINE)
"""Claude Code's line prefix in a `read`: the number right-aligned in six columns, then an arrow."""
NO_FACTS = Facts()
LOW = Context(0, 1, "low", Settings(), NO_FACTS)
"""An old part at the low tier, knowing nothing of the history."""


def everywhere(name: str, part: Part, facts: Facts = NO_FACTS) -> None:
    """`run_everywhere` for one part at step 1 of a one-step session."""
    run_everywhere(Seen(name, part, 1, 1, facts, facts, frozenset()), part)


def old(part: Part, tier: Tier = "low", facts: Facts = NO_FACTS) -> Part | None:
    """The part as the pipeline compresses it once old (None: left as it is)."""
    ctx = Context(0, 1, tier, Settings(), facts)
    outcome = outcome_for(part, ctx, compressors_for(part, ctx), sizes(part))
    assert outcome.failures == 0
    return outcome.part


def captured(part: Part) -> Part | None:
    """The part as the capture-time trim leaves it when it is new (None: left as it is)."""
    ctx = Context(0, 1, "low", Settings(), NO_FACTS, captured=True)
    outcome = outcome_for(part, ctx, ("capture",), sizes(part))
    assert outcome.failures == 0
    return outcome.part


def test_one_array_per_line_is_cut_as_text() -> None:
    """`jq -c` output (the corpus's one compressor failure): routed as JSON, it is not JSON, so
    json_arrays leaves it and the command route goes on."""
    part = CASES["jq-c-arrays"]
    assert compressors_for(part, LOW)[:2] == ("json_arrays", "command_output")
    assert REGISTRY["json_arrays"].compress(part, LOW) is None
    everywhere("jq -c", part)
    longer = with_main_text(part, "\n".join([main_text(part)] * 40))
    everywhere("jq -c, 200 lines", longer)
    assert old(longer) is not None


def test_one_object_per_line_cut_off_by_the_tool() -> None:
    """JSON lines whose last object the tool truncated: the long lines are clipped, nothing raises."""
    part = CASES["jsonl-cut-by-the-tool"]
    everywhere("jsonl", part)
    shortened = old(part, "high")
    assert shortened is not None and "Shell cwd was reset" in main_text(shortened)


def test_an_array_cut_off_at_any_line_is_cut_as_text() -> None:
    """A real JSON array ended after each of its lines, and inside one: never JSON, never a failure."""
    part = CASES["json-array"]
    text = main_text(part)
    ends = [match.start() for match in re.finditer("\n", text)] + [text.index('"Refactor') + 4]
    for end in ends:
        cut = with_main_text(part, text[:end])
        assert REGISTRY["json_arrays"].compress(cut, LOW) is None
        everywhere(f"array cut at {end}", cut)
    assert old(with_main_text(part, text[: ends[-2]])) is not None


@pytest.mark.parametrize("depth", [101, 1_000])
def test_an_array_nested_past_the_limit_is_left_whole(depth: int) -> None:
    """Nesting past the limit (1,000 levels parse, but no recursive walk gets through them) is left to the command route."""
    items = ",".join(["[" * depth + str(item) + "]" * depth for item in range(40)])
    part = with_main_text(CASES["json-array"], f"[{items}]")
    assert REGISTRY["json_arrays"].compress(part, LOW) is None
    everywhere(f"nested {depth}", part)


def test_an_array_nested_within_the_limit_is_crushed() -> None:
    """40 items nested 99 deep: still JSON the compressor rewrites."""
    items = ",".join(["[" * 98 + str(item) + "]" * 98 for item in range(40)])
    part = with_main_text(CASES["json-array"], f"[{items}]")
    result = REGISTRY["json_arrays"].compress(part, LOW)
    assert result is not None and len(orjson.loads(main_text(result.part))) < 20


def test_binary_output() -> None:
    """A NUL inside real output, and a binary file printed to the terminal: cut and restorable."""
    everywhere("null byte", CASES["null-byte"])
    binary = "".join(chr(byte) for byte in range(256)) * 120
    cat = with_main_text(CASES["null-byte"], f"<returncode>0</returncode>\n<output>\n{binary}\n</output>")
    everywhere("binary cat", cat)
    assert captured(cat) is not None and old(cat) is not None
    read = with_main_text(CASES["read-arrow-prefix"], binary)
    everywhere("binary read", read)
    assert captured(read) is not None


def test_minified_one_line_file() -> None:
    """A `read` of a one-line file far over the cap: the capture trim clips the line, old reads too."""
    lines = [
        line.split("→", 1)[1].strip()
        for line in main_text(CASES["read-arrow-prefix"]).split("\n")
        if "→" in line
    ]
    minified = ";".join(lines) * 40
    part = with_main_text(CASES["read-arrow-prefix"], f"     1→{minified}")
    everywhere("minified", part)
    trimmed = captured(part)
    assert trimmed is not None and len(main_text(trimmed)) < len(minified) // 4
    assert old(part, "high") is not None


def renumbered(text: str, style: str) -> str:
    """A read's lines behind another prefix: OpenCode's `N: `, zero-padded `0000N| `, `cat -n`'s tab, or none."""
    prefixes = {"arrow": r"\g<0>", "colon": r"\1: ", "padded": None, "tab": r"\1\t", "none": ""}
    if style == "padded":
        return ARROW.sub(lambda match: f"{int(match.group(1)):05d}| ", text)
    return ARROW.sub(prefixes[style], text)


@pytest.mark.parametrize("style", ["arrow", "colon", "padded", "tab", "none"])
def test_read_numbered_any_way_keeps_the_line_an_error_names(style: str) -> None:
    """A read of lines 175-234 whose line 204 a later error names: at the high tier, with any
    line prefix or none, that line stays (the offset numbers unnumbered lines), and nothing raises."""
    part = CASES["read-arrow-prefix"]
    variant = with_main_text(part, renumbered(main_text(part), style))
    named = "if now.Sub(state.StartedAt) < sessionGracePeriod {"
    assert f"204→\t\t{named}" in main_text(part)
    assert named not in main_text(old(variant, "high"))
    facts = Facts(named_lines=frozenset({(part["state"]["input"]["filePath"], 204)}))
    everywhere(style, variant, facts)
    assert named in main_text(old(variant, "high", facts))
