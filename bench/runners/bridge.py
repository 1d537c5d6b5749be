"""Bridge benchmark: the real plugin under Node talking to the real engine, step by step.

    python -m bench.runners.bridge [--tokens 200000] [--rss-tokens 1000000] [--corpus DIR]

A long session is built by concatenating corpus sessions (ids made unique, one session
id). The plugin's `experimental.chat.messages.transform` hook is called at every step with
a fresh copy of the history, as OpenCode does after reloading it from storage; each call
is timed from the hook's start (digests, serialisation) through the engine's answer to the
edits applied. Reported: the per-step round trip near the target size (median, p99), the
cold start (plugin start → first answered transform) and the engine's RSS after a
1M-token session. Token counts are deepmem's estimates. Numbers are printed, never asserted.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

from bench.corpora import DEFAULT, REPOSITORY, corpus_folder, load_messages, session_paths
from deepmem.history import history_tokens, visible_text
from deepmem.project.config import load_settings
from deepmem.tokens import estimate_tokens
from deepmem.transform.outcomes import message_digest
from deepmem.transform.plan import plan_transform

PLUGIN = REPOSITORY / "deepmem" / "plugin" / "deepmem.js"

DRIVER = r"""
import { readFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { pathToFileURL } from "node:url";
const [pluginPath, sessionPath, stepsPath, project] = process.argv.slice(2);
const messages = JSON.parse(readFileSync(sessionPath, "utf8"));
const steps = JSON.parse(readFileSync(stepsPath, "utf8"));
const started = performance.now();
const { DeepmemPlugin } = await import(pathToFileURL(pluginPath).href);
const hooks = await DeepmemPlugin({ directory: project, client: {} });
const hook = hooks["experimental.chat.messages.transform"];
for (const [index, length] of steps.entries()) {
  const copy = structuredClone(messages.slice(0, length));  // OpenCode reloads every step
  const t0 = performance.now();
  await hook({}, { messages: copy });
  const t1 = performance.now();
  const row = { length, ms: t1 - t0 };
  if (index === 0) row.cold_ms = t1 - started;
  row.changed = copy.some((m, i) => m !== undefined && JSON.stringify(m.parts) !== JSON.stringify(messages[i].parts));
  console.log(JSON.stringify(row));
}
const pids = spawnSync("pgrep", ["-f", `deepmem bridge --root ${project}$`], { encoding: "utf8" }).stdout.split("\n").filter(Boolean);
const status = pids.length ? readFileSync(`/proc/${pids[0]}/status`, "utf8") : "";
const rss = /VmRSS:\s+(\d+) kB/.exec(status);
console.log(JSON.stringify({ rss_kb: rss ? Number(rss[1]) : null }));
"""


def build_session(folder: Path, target_tokens: int) -> list[dict]:
    """Corpus sessions one after another (ids prefixed to stay unique), cut at the target size."""
    messages: list[dict] = []
    tokens = 0
    for number, path in enumerate(session_paths(folder)):
        prefix = f"b{number:04d}"
        for message in load_messages(path):
            info = {**message["info"], "id": f"msg_{prefix}_{message['info']['id']}", "sessionID": "ses_bench"}
            parts = [
                {**part, "id": f"prt_{prefix}_{part.get('id')}", "messageID": info["id"], "sessionID": "ses_bench"}
                for part in message["parts"]
            ]
            messages.append({"info": info, "parts": parts})
            tokens += sum(estimate_tokens(visible_text(part)) for part in parts)
            if tokens >= target_tokens:
                return messages
    raise SystemExit(f"the corpus holds only ~{tokens:,} tokens, fewer than {target_tokens:,}")


def step_lengths(messages: list[dict], stride: int = 1) -> list[int]:
    """History lengths at which OpenCode calls the transform (before each assistant message)."""
    lengths = [i for i, m in enumerate(messages) if m["info"]["role"] == "assistant" and i > 0]
    chosen = lengths[::stride]
    return chosen + [len(messages)] if chosen[-1] != len(messages) else chosen


def drive(messages: list[dict], lengths: list[int], work: Path) -> list[dict]:
    """Run the plugin under node over the given steps; one record per step plus the RSS."""
    project = work / f"project-{len(lengths)}"
    project.mkdir()
    (work / "session.json").write_bytes(orjson.dumps(messages))
    (work / "steps.json").write_bytes(orjson.dumps(lengths))
    (work / "driver.mjs").write_text(DRIVER, encoding="utf-8")
    env = {"DEEPMEM_PYTHON": sys.executable, "DEEPMEM_DEADLINE_MS": "600000", "PATH": "/usr/bin:/bin",
           "XDG_DATA_HOME": str(work / "data")}  # the sealing key, made on the first CCR write
    done = subprocess.run(
        ["node", str(work / "driver.mjs"), str(PLUGIN), str(work / "session.json"), str(work / "steps.json"), str(project)],
        capture_output=True, text=True, env=env, check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"driver failed:\n{done.stderr[-3000:]}")
    return [orjson.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def percentile(values: list[float], share: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


def prefix_tokens(messages: list[dict]) -> list[int]:
    """Estimated tokens of messages[:n] for every n."""
    totals = [0]
    for message in messages:
        totals.append(totals[-1] + history_tokens([message]))
    return totals


def plan_ms(history: list[dict], digests: list[bytes | None]) -> float:
    """Time of `plan_transform` alone on one history, in this process (the pipeline's share),
    given the message digests, as the engine is given the plugin's."""
    settings = load_settings(None)
    started = time.perf_counter()
    plan_transform(history, settings, digests=digests[: len(history)])
    return (time.perf_counter() - started) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=200_000, help="grow the session to this size")
    parser.add_argument("--rss-tokens", type=int, default=1_000_000, help="session size for the RSS figure")
    parser.add_argument("--rss-stride", type=int, default=10, help="feed every Nth step of the RSS session")
    parser.add_argument("--corpus", type=corpus_folder, default=DEFAULT, help="a corpus name or a folder of exports")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        messages = build_session(args.corpus, args.tokens)
        sizes = prefix_tokens(messages)
        lengths = step_lengths(messages)
        rows = [row for row in drive(messages, lengths, work) if "ms" in row]
        near_rows = [row for row in rows if sizes[row["length"]] >= 0.9 * sizes[-1]]
        near = [row["ms"] for row in near_rows]
        every = [row["ms"] for row in rows]
        digests = [message_digest(message) for message in messages]
        plan_transform(messages, load_settings(None), digests=digests)  # warm the caches as the engine's are
        plans = [plan_ms(messages[: row["length"]], digests) for row in near_rows]
        overhead = [row["ms"] - plan for row, plan in zip(near_rows, plans, strict=True)]
        print(f"session: {len(messages)} messages, {len(lengths)} steps, ~{sizes[-1]:,} tokens at the end")
        print(f"{'steps':<28}{'n':>6}{'median ms':>12}{'p99 ms':>10}{'max ms':>10}")
        for label, values in (("all steps", every), (f"at ≥90% of {sizes[-1]:,} tok", near)):
            print(f"{label:<28}{len(values):>6}{statistics.median(values):>12.2f}{percentile(values, 0.99):>10.2f}{max(values):>10.2f}")
        print(f"cold start (plugin start → first answered transform): {rows[0]['cold_ms']:.0f} ms")
        print(
            f"of which plan_transform alone (same steps, in process): median {statistics.median(plans):.2f} ms; "
            f"plugin + wire + engine bookkeeping: median {statistics.median(overhead):.2f} ms, "
            f"p99 {percentile(overhead, 0.99):.2f} ms"
        )
        print(f"steps whose output was compressed: {sum(row['changed'] for row in rows)} of {len(rows)}")

        big = build_session(args.corpus, args.rss_tokens)
        big_lengths = step_lengths(big, args.rss_stride)
        rss = next(row["rss_kb"] for row in drive(big, big_lengths, work) if "rss_kb" in row)
        big_tokens = history_tokens(big)
        print(f"engine RSS after a ~{big_tokens:,}-token session ({len(big_lengths)} steps fed): {rss / 1024:.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
