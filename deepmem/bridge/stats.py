"""What compression saved per session and its two running bills: a plan's totals, the toast, and `sessions/<sid>/stats.json`."""

from __future__ import annotations

from pathlib import Path

import msgspec
import orjson

from deepmem.bill.prices import PriceModel
from deepmem.transform.jumps import Bills
from deepmem.transform.plan import TransformPlan
from deepmem.types import SavedTotals
from deepmem.vault.disk import PRIVATE
from deepmem.vault.redact import Redactor
from deepmem.vault.writer import write_shared_json

STATS_FILE = "stats.json"
"""Read by `deepmem stats`."""


def plan_totals(plan: TransformPlan, prices: PriceModel) -> SavedTotals:
    """Whole-history totals of a plan, for stats and the toast, with the session's two running
    bills in dollars at `prices`."""
    rows = plan.stats.values()
    bills = plan.bills or Bills()
    return SavedTotals(
        plan.layout.step,
        sum(row.parts for row in rows),
        sum(row.compressed for row in rows),
        sum(row.tokens_before for row in rows),
        sum(row.tokens_after for row in rows),
        *bills.dollars(prices),
    )


def toast_text(saved: SavedTotals) -> str:
    """One line for the user: what compression saved in this session so far."""
    before, after = saved.tokens_before, saved.tokens_after
    percent = 100 * (before - after) / before if before else 0.0
    return (
        f"deepmem: {before - after:,} tokens saved ({percent:.0f}%) · "
        f"{saved.compressed} parts compressed, all restorable with deep_expand"
    )


def write_stats(folder: Path, session_id: str, saved: SavedTotals, redactor: Redactor) -> None:
    """Write a session's totals to its folder's `stats.json` (private, redacted)."""
    value = {"session": session_id, **msgspec.to_builtins(saved)}
    write_shared_json(folder / STATS_FILE, value, redactor, orjson.OPT_INDENT_2, PRIVATE)
