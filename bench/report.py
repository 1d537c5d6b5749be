"""Replay results as plain tables, a JSON file and a chart."""

from __future__ import annotations

from pathlib import Path

from deepmem.sessionio import atomic_write, encode_json

TARGETS = {"raw": 0.62, "final": 0.55, "cost_warm": 0.85, "support": 0.95}
"""Issue targets for deepmem at default settings (ratios to no compression)."""


def _short(session: str) -> str:
    return session.split("__", 1)[-1]


def format_sessions(result: dict, contender: str = "deepmem") -> str:
    """One row per session: its size and deepmem's ratios."""
    header = (
        f"{'session':<34}{'steps':>6}{'tokens':>12}{'raw×':>7}{'final×':>8}"
        f"{'prefix':>8}{'cost×':>7}{'cold×':>7}{'support':>9}"
    )
    lines = [f"{contender} against no compression, per session", header, "-" * len(header)]
    for row in result["sessions"]:
        r = row["ratios"][contender]
        lines.append(
            f"{_short(row['session']):<34}{row['steps']:>6}{row['tokens']:>12,}{r['raw']:>7.2f}"
            f"{r['final']:>8.2f}{r['prefix_stability']:>8.1%}{r['cost_warm']:>7.2f}{r['cost_cold']:>7.2f}"
            f"{r['support']:>9.1%}"
        )
    return "\n".join(lines) + "\n\n"


def format_totals(result: dict) -> str:
    """One row per contender over the whole corpus."""
    totals = result["totals"]
    header = (
        f"{'contender':<26}{'raw×':>7}{'final×':>8}{'cost× warm':>12}{'cost× cold':>12}{'prefix':>9}"
        f"{'support':>9}{'steps ok':>10}"
    )
    lines = [
        f"all {len(result['sessions'])} sessions, {totals['steps']:,} steps, "
        f"{totals['tokens']:,} tokens uncompressed (summed over steps)",
        header,
        "-" * len(header),
    ]
    for name, r in totals["ratios"].items():
        lines.append(
            f"{name:<26}{r['raw']:>7.3f}{r['final']:>8.3f}{r['cost_warm']:>12.3f}"
            f"{r['cost_cold']:>12.3f}{r['prefix_stability']:>9.1%}{r['support']:>9.1%}{r['steps_supported']:>10.1%}"
        )
    timing = result["deepmem_transform_ms"]
    lines.append(
        f"deepmem transform per step: median {timing['median']:.1f} ms, max {timing['max']:.1f} ms; "
        f"compressor failures: {result['compressor_failures']}"
    )
    return "\n".join(lines) + "\n\n"


def write_json(result: dict, path: Path) -> None:
    """The whole result, atomically."""
    atomic_write(path, encode_json(result))


def draw_chart(result: dict, path: Path) -> None:
    """Trade-off (raw tokens vs warm-cache cost) of every contender, and deepmem per session."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (curve, support, spread) = plt.subplots(1, 3, figsize=(19, 5.5))
    style = {"deepmem": ("o", "tab:red"), "mask": ("s", "tab:gray")}
    for name, r in result["totals"]["ratios"].items():
        marker, color = style.get(name.split("-")[0], ("^", "tab:blue"))
        curve.scatter(r["raw"], r["cost_warm"], marker=marker, color=color, s=60)
        curve.annotate(name, (r["raw"], r["cost_warm"]), textcoords="offset points", xytext=(5, 4), fontsize=8)
    curve.axhline(1.0, color="black", linewidth=0.8)
    curve.axhline(TARGETS["cost_warm"], color="tab:green", linestyle="--", linewidth=0.8, label="cost target")
    curve.axvline(TARGETS["raw"], color="tab:orange", linestyle="--", linewidth=0.8, label="raw target")
    curve.set_xlabel("raw tokens summed over steps (× no compression)")
    curve.set_ylabel("cost with warm prompt cache (× no compression)")
    curve.set_title("trade-off: deepmem settings (tailT-batchB) and masking baselines")
    curve.legend(loc="upper left", fontsize=8)
    for name, r in result["totals"]["ratios"].items():
        marker, color = style.get(name.split("-")[0], ("^", "tab:blue"))
        support.scatter(r["raw"], r["support"], marker=marker, color=color, s=60)
        support.annotate(name, (r["raw"], r["support"]), textcoords="offset points", xytext=(5, 4), fontsize=8)
    support.axhline(TARGETS["support"], color="tab:green", linestyle="--", linewidth=0.8, label="support target")
    support.set_xlabel("raw tokens summed over steps (× no compression)")
    support.set_ylabel("next-step support (quoted lines still visible)")
    support.set_title("what the saving costs the next step")
    support.legend(loc="lower right", fontsize=8)
    rows = result["sessions"]
    spread.scatter(
        [row["ratios"]["deepmem"]["raw"] for row in rows],
        [row["ratios"]["deepmem"]["cost_warm"] for row in rows],
        s=[max(6, row["tokens"] / 40_000) for row in rows],
        color="tab:red",
        alpha=0.5,
    )
    spread.axhline(1.0, color="black", linewidth=0.8)
    spread.set_xlabel("raw tokens (× no compression)")
    spread.set_ylabel("warm-cache cost (× no compression)")
    spread.set_title("deepmem defaults per session (area ∝ session tokens)")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)
