"""The comparison as a Markdown table and two charts."""

from __future__ import annotations

from pathlib import Path

COLUMNS = (
    ("raw", "tokens×", "{:.3f}"),
    ("final", "last step×", "{:.3f}"),
    ("cost_warm", "cost× warm", "{:.3f}"),
    ("prefix_stability", "prefix", "{:.1%}"),
    ("support", "next-step support", "{:.1%}"),
)


def markdown_table(result: dict) -> str:
    """One row per contender over all sessions, against no compression."""
    totals = result["totals"]
    lines = [
        f"{totals['sessions']} sessions of {result.get('corpus', '')}, {totals['steps']:,} steps, "
        f"{totals['tokens']:,} o200k tokens uncompressed (summed over steps)",
        "",
        "| contender | " + " | ".join(title for _, title, _ in COLUMNS) + " |",
        "|---|" + "---:|" * len(COLUMNS),
    ]
    for name, figures in totals["figures"].items():
        cells = [fmt.format(figures[key]) for key, _, fmt in COLUMNS]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    for name, reason in result["skipped"].items():
        lines.append(f"| {name} | skipped: {reason} |" + " |" * (len(COLUMNS) - 1))
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
            axis.plot(range(1, len(tokens) + 1), tokens, label=name, linewidth=2 if name == "deepmem" else 1)
    axis.set_xlabel("step")
    axis.set_ylabel("o200k tokens sent")
    axis.set_title(f"tokens per step: {longest.get('session', '')}")
    axis.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
