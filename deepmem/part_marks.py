"""What deepmem leaves in a part's `metadata.deepmem`: one of two records, written and read here.

A compressed part carries the CCR key of its whole original and the compressors that made
it (`CompressedMark`); a part deepmem appended, a nudge, says so (`AppendedMark`) and is
dropped when the history is restored. The two are told apart by their fields, so the JSON
holds nothing more than each record's own.
"""

from __future__ import annotations

import msgspec

from deepmem.types import Part


class CompressedMark(msgspec.Struct, frozen=True):
    """A part compressed by `by`, whose whole original is in CCR under `part`."""

    part: str
    by: list[str]


class AppendedMark(msgspec.Struct, frozen=True):
    """A part deepmem appended (`appended` names what it is: a nudge)."""

    appended: str


def mark_metadata(part: Part, mark: CompressedMark | AppendedMark) -> dict:
    """The part's metadata with the mark put under `deepmem` (what else it holds is kept)."""
    return {**(part.get("metadata") or {}), "deepmem": msgspec.to_builtins(mark)}


def part_mark(part: Part) -> CompressedMark | AppendedMark | None:
    """The mark deepmem left on a part, or None (a value there of another shape is not ours)."""
    mark = (part.get("metadata") or {}).get("deepmem") if isinstance(part, dict) else None
    if not isinstance(mark, dict):
        return None
    if mark.get("appended"):
        return AppendedMark(str(mark["appended"]))
    if isinstance(mark.get("part"), str):
        by = mark.get("by")
        return CompressedMark(mark["part"], [str(name) for name in by] if isinstance(by, list) else [])
    return None
