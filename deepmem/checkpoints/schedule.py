"""`.schedule.json`: when /dream and /distill last ran, and running them after N compactions."""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import orjson

from deepmem.checkpoints.distill import describe_distill, distill
from deepmem.checkpoints.dream import describe_dream, dream
from deepmem.project.config import memory_dir
from deepmem.types import DeepmemError
from deepmem.vault.disk import locked
from deepmem.vault.writer import write_shared_json

SCHEDULE = ".schedule.json"
EVERY = {"dream": 5, "distill": 10}
"""Compactions between automatic runs."""
JOBS: dict[str, tuple[Callable[[Any], dict[str, Any]], Callable[[dict[str, Any]], str]]] = {
    "dream": (dream, describe_dream),
    "distill": (distill, describe_distill),
}


FIELD_TYPES = {"every": int, "since": int, "last_run": str, "last_result": str}
SET_ASIDE = SCHEDULE + ".bad"


def load_schedule(root: str | os.PathLike[str]) -> dict[str, Any]:
    """The schedule, or a fresh one when missing or unreadable; fields of the wrong type are reset."""
    try:
        value = orjson.loads((memory_dir(root) / SCHEDULE).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        value = None
    jobs = value.get("jobs") if isinstance(value, dict) else None
    fresh = {name: {"every": every, "since": 0, "last_run": None, "last_result": None} for name, every in EVERY.items()}
    if isinstance(jobs, dict):
        for name, job in fresh.items():
            if isinstance(jobs.get(name), dict):
                job.update({k: v for k, v in jobs[name].items()
                            if k in job and isinstance(v, FIELD_TYPES[k]) and not isinstance(v, bool)})
    return {"jobs": fresh}


def set_aside_unreadable(root: str | os.PathLike[str]) -> str | None:
    """Keep an unreadable schedule as `.schedule.json.bad` (a fresh one replaces it); say so, or None."""
    path = memory_dir(root) / SCHEDULE
    try:
        orjson.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, orjson.JSONDecodeError):
        path.replace(path.with_name(SET_ASIDE))
        return f"{SCHEDULE} was unreadable: kept as {SET_ASIDE}, counting starts afresh"
    return None


def update_schedule(root: str | os.PathLike[str], change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """Load, change and write the schedule under the memory folder's lock; return it."""
    with locked(memory_dir(root)):
        schedule = load_schedule(root)
        change(schedule)
        write_shared_json(memory_dir(root) / SCHEDULE, schedule, option=orjson.OPT_INDENT_2)
    return schedule


def run_job(root: str | os.PathLike[str], name: str) -> str:
    """Run /dream or /distill now, record it in the schedule, return its one-line result."""
    job, describe = JOBS[name]
    line = describe(job(root))
    stamp = datetime.now(UTC).isoformat(timespec="seconds")
    update_schedule(root, lambda schedule: schedule["jobs"][name].update(since=0, last_run=stamp, last_result=line))
    return line


def count_compaction(schedule: dict[str, Any]) -> None:
    """One more compaction for every job."""
    for job in schedule["jobs"].values():
        job["since"] += 1


def after_compaction(root: str | os.PathLike[str]) -> list[str]:
    """Count one compaction; run the jobs that are due. Failures are reported, never raised."""
    try:
        with locked(memory_dir(root)):
            notice = set_aside_unreadable(root)
        schedule = update_schedule(root, count_compaction)
    except OSError as exc:
        return [f"schedule not updated: {exc.strerror or exc}"]
    due = [name for name, job in schedule["jobs"].items() if 0 < job["every"] <= job["since"]]
    results = [notice] if notice else []
    for name in due:
        try:
            results.append(run_job(root, name))
        except (DeepmemError, OSError) as exc:
            results.append(f"{name} failed: {exc}")
    return results
