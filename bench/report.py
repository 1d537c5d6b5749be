"""The benchmarks' figures as tables, JSON and charts, written to bench/results/ by default:
`python -m bench`'s comparison (a Markdown table, two charts) and `python -m bench.replay`'s
tables per corpus and price model (a chart each)."""

from __future__ import annotations

from pathlib import Path

from deepmem.vault.sessionio import encode_json
from deepmem.vault.writer import write_given

RESULTS = Path(__file__).resolve().parent / "results"
"""Where the current figures are kept."""
TARGETS = {"raw": 0.62, "final": 0.55, "cost_warm": 0.75, "support": 0.95}
"""Issue targets for deepmem at default settings (ratios to no compression)."""


def _short(session: str) -> str:
    return session.split("__", 1)[-1]


def format_sessions(result: dict, model: str) -> str:
    """One row per session: its size and deepmem's ratios under one price model."""
    contender = f"deepmem@{model}"
    header = (
        f"{'session':<34}{'steps':>6}{'tokens':>12}{'raw×':>7}{'final×':>8}"
        f"{'prefix':>8}{'cost×':>7}{'+reread':>8}{'optimum':>8}{'support':>9}"
    )
    lines = [f"{contender} against no compression, per session ({model} prices)", header, "-" * len(header)]
    for row in result["sessions"]:
        r = row["ratios"][model][contender]
        best = row["ratios"][model].get(f"hindsight@{model}", r)["cost_warm"]
        lines.append(
            f"{_short(row['session']):<34}{row['steps']:>6}{row['tokens']:>12,}{r['raw']:>7.2f}"
            f"{r['final']:>8.2f}{r['prefix_stability']:>8.1%}{r['cost_warm']:>7.2f}{r['cost_recovered']:>8.2f}"
            f"{r['cost_warm'] / best if best else 1.0:>8.3f}{r['support']:>9.1%}"
        )
    return "\n".join(lines) + "\n\n"


def format_totals(result: dict) -> str:
    """Per price model, one row per contender over the whole corpus."""
    totals = result["totals"]
    header = (
        f"{'contender':<26}{'raw×':>7}{'final×':>8}{'cost×':>8}{'+reread':>9}{'msgs×':>8}{'prefix':>9}"
        f"{'support':>9}{'steps ok':>10}{'median':>8}{'costlier':>11}{'worst':>7}"
    )
    frame = result.get("frame", {})
    lines = [
        f"{result['corpus']}: {len(result['sessions'])} sessions, {totals['steps']:,} steps, "
        f"{totals['tokens']:,} tokens of messages uncompressed (summed over steps); "
        f"frame: {frame.get('kind', 'none')}" + (f" + {frame['extra']:,} tokens" if frame.get("extra") else "")
    ]
    for model, rows in totals["ratios"].items():
        best = rows.get(f"hindsight@{model}", {}).get("cost_warm")
        lines += [
            "",
            f"{model} prices, whole requests (warm cache; +reread: quoted lines out of view read again; "
            "msgs×: the cost of the messages alone; median, costlier, worst: the sessions one by one, cost×)",
            header,
            "-" * len(header),
        ]
        for name, r in rows.items():
            spread = result["spread"][model][name]
            lines.append(
                f"{name:<26}{r['raw']:>7.3f}{r['final']:>8.3f}{r['cost_warm']:>8.3f}{r['cost_recovered']:>9.3f}"
                f"{r['cost_messages']:>8.3f}"
                f"{r['prefix_stability']:>9.1%}{r['support']:>9.1%}{r['steps_supported']:>10.1%}"
                f"{spread['median']:>8.3f}{spread['costlier']:>5} of {spread['sessions']:<3}{spread['worst']:>7.3f}"
            )
        if best and f"deepmem@{model}" in rows:
            lines.append(f"deepmem@{model} against the hindsight optimum: {rows[f'deepmem@{model}']['cost_warm'] / best:.3f}×")
    timing = result["deepmem_transform_ms"]
    lines.append(
        f"deepmem transform per step: median {timing['median']:.1f} ms, max {timing['max']:.1f} ms; "
        f"compressor failures: {result['compressor_failures']}"
    )
    return "\n".join(lines) + "\n\n"


def write_json(result: dict, path: Path) -> None:
    """The whole result, atomically."""
    write_given(path, encode_json(result))


def draw_chart(result: dict, path: Path, model: str) -> None:
    """Trade-off (raw tokens vs warm-cache cost) of every contender, and deepmem per session, under one price model."""
    plt = pyplot()
    figure, (curve, support, spread) = plt.subplots(1, 3, figsize=(19, 5.5))
    style = {"deepmem": ("o", "tab:red"), "mask": ("s", "tab:gray")}
    rows = result["totals"]["ratios"][model]
    for name, r in rows.items():
        marker, color = style.get(name.split("-")[0].split("@")[0], ("^", "tab:blue"))
        curve.scatter(r["raw"], r["cost_warm"], marker=marker, color=color, s=60)
        curve.annotate(name, (r["raw"], r["cost_warm"]), textcoords="offset points", xytext=(5, 4), fontsize=8)
    curve.axhline(1.0, color="black", linewidth=0.8)
    curve.axhline(TARGETS["cost_warm"], color="tab:green", linestyle="--", linewidth=0.8, label="cost target")
    curve.axvline(TARGETS["raw"], color="tab:orange", linestyle="--", linewidth=0.8, label="raw target")
    curve.set_xlabel("raw tokens summed over steps (× no compression)")
    curve.set_ylabel(f"cost with warm prompt cache, {model} prices (× no compression)")
    curve.set_title("trade-off: deepmem, its schedules and masking baselines")
    curve.legend(loc="upper left", fontsize=8)
    for name, r in rows.items():
        marker, color = style.get(name.split("-")[0].split("@")[0], ("^", "tab:blue"))
        support.scatter(r["raw"], r["support"], marker=marker, color=color, s=60)
        support.annotate(name, (r["raw"], r["support"]), textcoords="offset points", xytext=(5, 4), fontsize=8)
    support.axhline(TARGETS["support"], color="tab:green", linestyle="--", linewidth=0.8, label="support target")
    support.set_xlabel("raw tokens summed over steps (× no compression)")
    support.set_ylabel("next-step support (quoted lines still visible)")
    support.set_title("what the saving costs the next step")
    support.legend(loc="lower right", fontsize=8)
    sessions = result["sessions"]
    spread.scatter(
        [row["ratios"][model][f"deepmem@{model}"]["raw"] for row in sessions],
        [row["ratios"][model][f"deepmem@{model}"]["cost_warm"] for row in sessions],
        s=[max(6, row["tokens"] / 40_000) for row in sessions],
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


def draw_sessions(result: dict, path: Path, model: str) -> None:
    """Each contender's whole-request cost per session against no compression, sessions sorted
    from cheapest to dearest, with its median and the line where a session costs more than none."""
    plt = pyplot()
    figure, axis = plt.subplots(figsize=(11, 5.5))
    spreads = result["spread"][model]
    for name, spread in spreads.items():
        ratios = sorted(row["ratios"][model][name]["cost_warm"] for row in result["sessions"])
        share = [(index + 0.5) / len(ratios) for index in range(len(ratios))]
        line, = axis.step(share, ratios, where="mid", linewidth=2 if name.startswith("deepmem") else 1,
                          label=f"{name}: {spread['median']:.2f}× median, {spread['costlier']} of {spread['sessions']} "
                          f"costlier, worst {spread['worst']:.2f}×")
        axis.scatter([0.5], [spread["median"]], color=line.get_color(), zorder=3)
    axis.axhline(1.0, color="black", linewidth=0.8)
    axis.set_xlabel("share of sessions (sorted by cost ×)")
    axis.set_ylabel(f"whole-request cost, {model} prices (× no compression)")
    axis.set_title(f"{result.get('corpus', '')}: every session against no compression")
    axis.legend(fontsize=8, loc="upper left")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)


COLUMNS = (
    ("raw", "tokens×", "{:.3f}"),
    ("final", "last step×", "{:.3f}"),
    ("cost_warm", "cost× warm", "{:.3f}"),
    ("cost_messages", "cost×, messages only", "{:.3f}"),
    ("prefix_stability", "prefix", "{:.1%}"),
    ("support", "next-step support", "{:.1%}"),
)
SPREAD_TITLES = ("median session×", "costlier than none", "worst session×")


def spread_cells(spread: dict | None) -> list[str]:
    """The median session, the sessions costlier than none and the worst, as table cells ('-' without them)."""
    if not spread:
        return ["-"] * len(SPREAD_TITLES)
    return [f"{spread['median']:.3f}", f"{spread['costlier']} of {spread['sessions']}", f"{spread['worst']:.3f}"]


def markdown_table(result: dict) -> str:
    """One row per contender over all sessions, against no compression."""
    totals = result["totals"]
    lines = [
        f"{totals['sessions']} sessions of {result.get('corpus', '')}, {totals['steps']:,} steps, "
        f"{totals['tokens']:,} o200k tokens of messages uncompressed (summed over steps); whole requests "
        f"(frame: {result.get('frame', {}).get('kind', 'none')}) billed at {result.get('price_model', '')} prices",
        "",
        "| contender | " + " | ".join([*(title for _, title, _ in COLUMNS), *SPREAD_TITLES]) + " |",
        "|---|" + "---:|" * (len(COLUMNS) + len(SPREAD_TITLES)),
    ]
    spreads = result["spread"].get(result.get("price_model", ""), {})
    for name, figures in totals["figures"].items():
        cells = [fmt.format(figures[key]) for key, _, fmt in COLUMNS] + spread_cells(spreads.get(name))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    for name, reason in result["skipped"].items():
        lines.append(f"| {name} | skipped: {reason} |" + " |" * (len(COLUMNS) + len(SPREAD_TITLES) - 1))
    failed = [f"{name} {count}" for name, count in result["failures"].items() if count]
    lines += ["", "steps where a contender failed and sent the history unchanged: " + (", ".join(failed) or "none")]
    version = result["versions"].get("headroom-ai")
    if "headroom" in totals["figures"]:
        lines += ["", f"headroom-ai {version}"]
    return "\n".join(lines) + "\n"


def pyplot():
    """matplotlib's pyplot on the file-only backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def draw_savings(result: dict, path: Path) -> None:
    """Bars per contender: tokens, warm-cache cost and next-step support (all against no compression)."""
    plt = pyplot()
    figures = result["totals"]["figures"]
    names = list(figures)
    figure, axes = plt.subplots(1, 3, figsize=(15, 5), sharey=True)
    for axis, (key, title) in zip(
        axes, (("raw", "tokens summed over steps (×)"), ("cost_warm", "warm-cache cost (×)"), ("support", "next-step support")), strict=True
    ):
        values = [figures[name][key] for name in names]
        colors = ["tab:red" if name.startswith("deepmem") else "tab:gray" for name in names]
        axis.barh(names, values, color=colors)
        axis.axvline(1.0, color="black", linewidth=0.8)
        axis.set_title(title)
        for y, value in enumerate(values):
            axis.annotate(f"{value:.2f}", (value, y), textcoords="offset points", xytext=(3, -3), fontsize=8)
    axes[0].invert_yaxis()
    figure.suptitle(f"{result['totals']['sessions']} sessions, {result['totals']['steps']:,} steps, against no compression")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def draw_steps(result: dict, path: Path) -> None:
    """Tokens sent at each step of the longest session, one line per contender."""
    plt = pyplot()
    longest = result["steps_of_longest"]
    figure, axis = plt.subplots(figsize=(11, 5.5))
    for name, tokens in longest.get("per_step", {}).items():
        if name in result["totals"]["figures"]:
            axis.plot(range(1, len(tokens) + 1), tokens, label=name, linewidth=2 if name.startswith("deepmem@") else 1)
    axis.set_xlabel("step")
    axis.set_ylabel("o200k tokens sent")
    axis.set_title(f"tokens per step: {longest.get('session', '')}")
    axis.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
