"""Real outputs of every tool kind through the compressors the pipeline gives them: none raises,
and every cut comes back exactly from the originals its result carries.

The outputs are a fixed sample of the shared corpora and the OpenCode fixtures: from each
corpus, `PER_KIND` outputs of each kind (tool, output kind, status, JSON-looking or not),
chosen by hash: the same at every run, and from few sessions, so that few need their facts
folded. Each is run captured and old at every tier with no facts, the facts of the
history up to it and those of its whole session (`bench.runners.failures.Seen.contexts`), whole and
(by hypothesis, derandomized) cut off at any point, as a tool's own truncation leaves it.
"""

from __future__ import annotations

import heapq
import re
from functools import cache
from pathlib import Path
from typing import Any

import orjson
import pytest
import xxhash
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.corpora import SHARED, corpora, session_paths
from bench.runners.failures import Seen, names_for, scanned_parts, seen_parts
from deepmem.compressors import REGISTRY, is_json_array, route_keys
from deepmem.markers import marker_keys, shown_key
from deepmem.text.fields import main_text, with_main_text
from deepmem.toolcalls.kinds import tool_kind
from deepmem.transform.outcomes import outcome_for, sizes
from deepmem.types import Context, Facts, Part, Result, Settings
from deepmem.vault.ccr import CCRStore
from deepmem.vault.restore import restore_messages
from deepmem.vault.sessionio import read_session

PER_KIND = 3
"""Outputs of each kind taken from each corpus."""
CUT_MARKER = re.compile(r"\[… [^\[\]\n]*? · ccr:([0-9a-f]{16,32}) · deep_expand to restore\]")
"""Any marker naming a CCR key (`deepmem.markers.marker` and `removal_marker`)."""


def output_kind(part: Part) -> tuple[str, str, str, bool]:
    """What tells outputs apart for the sample: tool, output kind, status, JSON-looking."""
    status = str((part.get("state") or {}).get("status"))
    looks_json = bool(main_text(part)) and is_json_array(part, Context(0, 0, "low", Settings(), Facts()))
    return str(part.get("tool")), tool_kind(part), status, looks_json


def chosen_parts(folder: Path) -> dict[Path, set[str]]:
    """Session file → ids of its parts in the sample: per kind, the first `PER_KIND` by the hash of
    their session, then of their id."""
    candidates: dict[tuple[str, str, str, bool], list[tuple[int, int, Path, str]]] = {}
    for path in session_paths(folder):
        session = xxhash.xxh3_64_intdigest(path.name.encode())
        for message in read_session(str(path)).messages:
            for part in scanned_parts(message):
                part_id = str(part.get("id"))
                rank = (session, xxhash.xxh3_64_intdigest(part_id.encode()))
                candidates.setdefault(output_kind(part), []).append((*rank, path, part_id))
    chosen: dict[Path, set[str]] = {}
    for found in candidates.values():
        for *_, path, part_id in heapq.nsmallest(PER_KIND, found):
            chosen.setdefault(path, set()).add(part_id)
    return chosen


@cache
def samples() -> tuple[Seen, ...]:
    """The whole sample, corpus by corpus."""
    return tuple(
        seen
        for folder in corpora().values()
        for path, ids in sorted(chosen_parts(folder).items())
        for seen in seen_parts(path, lambda part, ids=ids: str(part.get("id")) in ids)
    )


def restores_text(before: str, after: str, stored: dict[str, str]) -> bool:
    """True when `after` names an original that is `before`, or gives `before` back once each
    marker is replaced by the original it names (a block removed from the middle)."""
    if any(stored.get(key) == before for key in marker_keys(after)):
        return True
    return CUT_MARKER.sub(lambda match: stored.get(match.group(1), match.group(0)), after) == before


def restores_value(before: Any, after: Any, stored: dict[str, str]) -> bool:
    """The same for a tool input: strings as texts, a purged input from its original, the rest walked."""
    if before == after:
        return True
    if isinstance(after, dict) and isinstance(after.get("purged"), str):
        return orjson.loads(stored[after["purged"].removeprefix("ccr:")]) == before
    if isinstance(before, str) and isinstance(after, str):
        return restores_text(before, after, stored)
    if isinstance(before, dict) and isinstance(after, dict) and before.keys() == after.keys():
        return all(restores_value(before[key], after[key], stored) for key in before)
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        return all(restores_value(old, new, stored) for old, new in zip(before, after, strict=True))
    return False


def check_result(before: Part, result: Result) -> None:
    """Every key the result's markers add is among its originals, and its text and input come back."""
    stored = {shown_key(original.key): original.text for original in result.originals}
    assert all(stored[shown_key(original.key)] == original.text for original in result.originals)
    after = result.part
    named = set(marker_keys(orjson.dumps(after).decode())) - set(marker_keys(orjson.dumps(before).decode()))
    assert named <= stored.keys(), named - stored.keys()
    assert restores_text(main_text(before) or "", main_text(after) or "", stored)
    assert restores_value(
        (before.get("state") or {}).get("input"), (after.get("state") or {}).get("input"), stored
    )


def run_everywhere(sample: Seen, part: Part) -> None:
    """Run the part's compressors in each context, one by one and as the pipeline does."""
    message = {"info": {"id": "msg_x", "role": "assistant"}, "parts": [part]}
    for label, ctx in sample.contexts(Settings()):
        current = part
        for name in names_for(part, ctx):
            try:
                result = REGISTRY[name].compress(current, ctx)
                if result is not None:
                    check_result(current, result)
                    current = result.part
            except Exception as exc:
                raise AssertionError(f"{name} on {sample.place} ({label})") from exc
        outcome = outcome_for(part, ctx, names_for(part, ctx), sizes(part))
        assert outcome.failures == 0, f"{sample.place} ({label})"
        if outcome.part is not None:
            store = CCRStore(None)
            store.put_all(list(outcome.originals))
            edited = {**message, "parts": [outcome.part]}
            assert restore_messages([edited], store) == [message], f"{sample.place} ({label})"


def test_the_sample_holds_every_kind_of_every_corpus() -> None:
    """Each corpus is sampled, and the parts meet every route a tool output can take."""
    if not SHARED.is_dir():
        pytest.skip("the shared corpora are not on this machine: the fixtures alone hold no skill call")
    chosen = samples()
    assert {sample.place.split("/")[0] for sample in chosen} == {folder.name for folder in corpora().values()}
    routes = {
        key
        for sample in chosen
        for _, ctx in list(sample.contexts(Settings()))[1:]
        for key in route_keys(sample.part, ctx)
    }
    assert routes >= {"read", "stale-read", "working", "search", "json", "command", "task", "skill"}
    assert routes >= {"tool:error", "duplicate", "input"}


def test_no_compressor_raises_on_real_outputs_and_every_cut_restores() -> None:
    """Each sampled output, whole, in every context."""
    for sample in samples():
        run_everywhere(sample, sample.part)


@settings(max_examples=150, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_no_compressor_raises_on_real_outputs_cut_off_anywhere(data: st.DataObject) -> None:
    """A sampled output cut off at any character (a truncated array, half a line, a lone `[`)."""
    sample = data.draw(st.sampled_from(samples()))
    text = main_text(sample.part) or ""
    end = data.draw(st.integers(0, len(text)))
    run_everywhere(sample, with_main_text(sample.part, text[:end]))
