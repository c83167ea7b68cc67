"""The table, the JSON and the PNG chart of ``python -m master bench``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks.bench import MODE_LABELS, RunResult

SHORT_LABELS = {"reliable": "this crawler", "memory": "in-memory", "scrapy-redis": "scrapy-redis"}

COLUMNS = (
    ("run", "<"),
    ("workers", ">"),
    ("pages", ">"),
    ("elapsed s", ">"),
    ("pages/s", ">"),
    ("speedup", ">"),
    ("efficiency", ">"),
    ("CPU ms/page", ">"),
    ("shop+Redis CPU ms/page", ">"),
    ("Redis cmds/page", ">"),
    ("round trips/page", ">"),
    ("peak RSS MB", ">"),
)


def baseline(results: list[RunResult]) -> RunResult | None:
    """The one-worker run of this crawler, which speedups are measured against."""
    for result in results:
        if result.mode == "reliable" and result.workers == 1:
            return result
    return None


def speedup(result: RunResult, base: RunResult | None) -> float | None:
    if base is None or not base.pages_per_s:
        return None
    return result.pages_per_s / base.pages_per_s


def rows(results: list[RunResult]) -> list[dict[str, Any]]:
    base = baseline(results)
    table = []
    for result in results:
        ratio = speedup(result, base)
        table.append(
            {
                **result.as_dict(),
                "label": MODE_LABELS[result.mode],
                "speedup": None if ratio is None else round(ratio, 3),
                "efficiency": None if ratio is None else round(ratio / result.workers, 3),
            }
        )
    return table


def render_table(results: list[RunResult]) -> str:
    lines = []
    for row in rows(results):
        lines.append(
            (
                row["label"],
                str(row["workers"]),
                str(row["pages"]),
                f"{row['elapsed']:.2f}",
                f"{row['pages_per_s']:.1f}",
                "-" if row["speedup"] is None else f"{row['speedup']:.2f}x",
                "-" if row["efficiency"] is None else f"{row['efficiency'] * 100:.0f}%",
                f"{row['cpu_ms_per_page']:.2f}",
                f"{row['shop_cpu_ms_per_page']:.2f}+{row['redis_cpu_ms_per_page']:.2f}",
                f"{row['redis_commands_per_page']:.2f}",
                f"{row['round_trips_per_page']:.2f}",
                f"{row['peak_rss_mb']:.0f}",
            )
        )
    widths = [
        max(len(name), *(len(line[i]) for line in lines)) if lines else len(name)
        for i, (name, _) in enumerate(COLUMNS)
    ]

    def fmt(cells: tuple[str, ...]) -> str:
        return "  ".join(
            cell.ljust(width) if align == "<" else cell.rjust(width)
            for cell, width, (_, align) in zip(cells, widths, COLUMNS, strict=True)
        ).rstrip()

    return "\n".join([fmt(tuple(name for name, _ in COLUMNS)), *(fmt(line) for line in lines)])


def render_ratios(results: list[RunResult]) -> list[str]:
    """One line per reference row: what the distributed machinery costs against it."""
    base = baseline(results)
    if base is None:
        return []
    lines = []
    for result in results:
        if result.mode == "reliable" or result.workers != 1:
            continue
        lines.append(
            f"1 worker of this crawler vs {MODE_LABELS[result.mode]}: "
            f"pages/s {base.pages_per_s / result.pages_per_s:.2f}x, "
            f"CPU ms/page {base.cpu_ms_per_page / result.cpu_ms_per_page:.2f}x, "
            f"Redis cmds/page {base.redis_commands_per_page:.2f} vs "
            f"{result.redis_commands_per_page:.2f}"
        )
    return lines


def write_json(path: Path, setup: dict[str, Any], results: list[RunResult]) -> None:
    path.write_text(json.dumps({"setup": setup, "runs": rows(results)}, indent=2) + "\n")


def draw_chart(path: Path, setup: dict[str, Any], results: list[RunResult]) -> None:
    """Speedup against workers (with the ideal line) and pages/s of every run."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ours = [r for r in results if r.mode == "reliable"]
    references = [r for r in results if r.mode != "reliable"]
    base = baseline(results)
    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    if ours and base is not None:
        counts = [r.workers for r in ours]
        left.plot(counts, [speedup(r, base) for r in ours], "o-", label="this crawler")
        left.plot(counts, counts, "--", color="grey", label="ideal")
        for ref in references:
            left.plot([ref.workers], [speedup(ref, base)], "s", label=MODE_LABELS[ref.mode])
        left.set_xticks(sorted({r.workers for r in results}))
    left.set_xlabel("workers")
    left.set_ylabel("speedup vs 1 worker (pages/s)")
    left.set_title("Speedup")
    left.grid(alpha=0.3)
    if left.get_legend_handles_labels()[0]:
        left.legend(fontsize=8)
    labels = [
        f"{SHORT_LABELS[r.mode]}\n{r.workers} worker{'s' if r.workers > 1 else ''}" for r in results
    ]
    colors = ["tab:blue" if r.mode == "reliable" else "tab:orange" for r in results]
    bars = right.bar(range(len(results)), [r.pages_per_s for r in results], color=colors)
    right.bar_label(bars, fmt="%.0f", fontsize=8)
    right.set_xticks(range(len(results)), labels, fontsize=7)
    right.set_ylabel("pages/s")
    right.set_title("Pages per second")
    right.grid(axis="y", alpha=0.3)
    figure.suptitle(
        f"demo shop {setup['products']} products, {setup['latency_ms']:g} ms latency, "
        f"Redis +{setup['redis_delay_ms']:g} ms, {setup['concurrency']} concurrent "
        f"requests/worker, {setup['cpus']} CPUs",
        fontsize=9,
    )
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
