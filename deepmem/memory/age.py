"""How old a memory is, in words for the model ("3 weeks ago") or as a coarse date for a frozen block."""

from __future__ import annotations

import re
from datetime import UTC, datetime

STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d(?::\d\d)?Z")
UNITS = ((365 * 86_400, "year"), (30 * 86_400, "month"), (7 * 86_400, "week"), (86_400, "day"), (3_600, "hour"))


def time_key(time: str) -> str:
    """The leading UTC time of an entry's time text, sortable; '' when it has none (hand-written)."""
    match = STAMP.match(time)
    return match.group(0) if match else ""


def stored_at(time: str) -> datetime | None:
    """The UTC time an entry's own time text names, or None (hand-written, unreadable)."""
    text = time_key(time)
    if not text:
        return None
    pattern = "%Y-%m-%dT%H:%M:%SZ" if text.count(":") == 2 else "%Y-%m-%dT%H:%MZ"
    return datetime.strptime(text, pattern).replace(tzinfo=UTC)


def relative_age(time: str, now: datetime) -> str:
    """'3 weeks ago', 'just now', or '' when the time is unknown."""
    when = stored_at(time)
    if when is None:
        return ""
    seconds = (now - when).total_seconds()
    for size, unit in UNITS:
        if seconds >= size:
            count = int(seconds // size)
            return f"{count} {unit}{'s' if count > 1 else ''} ago"
    return "just now" if seconds >= 0 else ""


def coarse_date(time: str) -> str:
    """The month an entry was stored ('2026-01'), or '' when unknown: it never changes with the clock."""
    when = stored_at(time)
    return when.strftime("%Y-%m") if when else ""


def date_words(time: str) -> str:
    """An entry's time as words a query can name ('2026-03-05T…' → '5 March 2026'); other text as written."""
    when = stored_at(time)
    return f"{when.day} {when:%B %Y}{time[len(time_key(time)):]}" if when else time
