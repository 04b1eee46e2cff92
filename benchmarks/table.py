"""The performance table, measured: every figure beside its reference, its target and
whether it is met.

Runs the other benchmark scripts, each in its own process with ``--json``, then prints one
Markdown table (figure | jurist | reference | ratio | target | met?):

- ``runner_throughput.py --memory``: the runner in-process against a raw
  ``litellm.acompletion`` loop, the default engine's HTTP client called directly and the
  ideal rate (concurrency / latency), on both engines; the cached re-run; jurist's own CPU
  per item; and ``jurist judge`` from the shell (start-up, reading, judging, scoring, exports
  and ``report.html`` included), fresh, cached and on a finished run, with N workers, and on
  one cached item, the same command run before (the command's fixed cost as a user re-running
  it meets it, beside its imports alone); the cached re-run is given at the margin (its items
  over its time beyond the one-item run's);
- ``runner_throughput.py --cli-only`` at ``--large`` items: the shell rows again, larger;
- ``startup.py``: ``jurist --help`` and ``jurist gate`` wall time and peak memory;
- ``memory.py``: peak memory of scoring and exporting at two sizes (growth per 1k items);
- ``metrics_speed.py``: AUROC and Cohen's kappa against scikit-learn on NumPy arrays.

The in-process rows are the runner's inner loop; the "shell" rows are what a user sees. A
row whose target is a ratio compares figures of the same round against the same server.
The default run takes about 8 minutes on 2 cores and gives the table of docs/benchmarks.md; ``--quick``
(smaller sizes, one round, no 20,000-item rows) about 5, as a smoke check. ``--out DIR``
keeps the JSON files, ``--read DIR`` prints the table of JSON files kept before without
measuring. The machine's load average is printed before and after: figures taken on a
loaded machine are low. A target that is not met says what bounds the figure (found by
profiling it: ``BOUNDS``).

Usage:
    python benchmarks/table.py [--quick] [--items 2000] [--large 20000] [--out DIR | --read DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
Row = tuple[str, str, str, str, str, str]


def run(script: str, out: Path, *options: str) -> None:
    """Run ``benchmarks/<script> --json <out> <options>``, its own output passed through."""
    command = [sys.executable, str(HERE / script), "--json", str(out), *options]
    print(f"$ {' '.join(Path(part).name if part.startswith('/') else part for part in command)}", flush=True)
    done = subprocess.run(command, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{script} failed with exit code {done.returncode}")


def measure(args: argparse.Namespace, root: Path) -> None:
    quick = args.quick
    run(
        "runner_throughput.py",
        root / "runner.json",
        *("--items", str(args.items), "--repeat", "1" if quick else "3", "--memory"),
    )
    if args.large:
        run(
            "runner_throughput.py",
            root / "runner-large.json",
            *("--items", str(args.large), "--repeat", "1", "--cli-only"),
        )
    run("startup.py", root / "startup.json", "--repeat", "3" if quick else "10")
    run("memory.py", root / "memory.json", "--items", *(("2000", "20000") if quick else ("10000", "100000")))
    run(
        "metrics_speed.py",
        root / "metrics.json",
        *("--sizes", "100000" if quick else "1000000", "--repeats", "3" if quick else "5"),
    )


def load(root: Path, name: str) -> Any:
    path = root / name
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def verdict(value: float, target: float, *, at_least: bool) -> str:
    """``yes``, or ``no`` with how far the figure is from the target."""
    met = value >= target if at_least else value <= target
    if met:
        return "yes"
    return f"no, {abs(value - target) / target:.0%} {'short' if at_least else 'over'}"


BOUNDS = {
    "one-cli": (
        "bound: imports (the 'imports alone' reference: pandas, pyarrow, numpy and jurist's own "
        "modules; a run whose every verdict and figure is cached imports neither DSPy, LiteLLM "
        "nor matplotlib), then reading, scoring and the exports of one item (about 0.2 s)"
    ),
    "cached-cli": (
        "bound: no one part; CPU of the 2,000-item re-run beyond its imports, sampled (py-spy): "
        "report.html 26% (its rows, the run store read once, the data as JSON, the redaction "
        "scan of the rows' distinct parts), making the items twice 14% (a first pass counts "
        "them and their blank inputs before anything is judged; RAGBench's sentence keys are "
        "made in each), the finished-verdict cache 13% (each item's key: its inputs as JSON, "
        "hashed; the read; decoding the verdict), the runner's loop 13%, the exports 12%, the "
        "store's writer 9%, the per-item table 8%"
    ),
    "cli-auto": (
        "bound: the fixed cost of a fresh run (one fresh item from the shell, about 1.2 s: "
        "start-up and imports, then DSPy's import and the program's build at the first call) "
        "against 6.25 s at the ideal rate: 2,000 items judged at the ideal rate with nothing "
        "after them would reach 6.25 / 7.45 = 0.84, at the runner's in-process rate (0.89 to "
        "0.92 of ideal) with scoring, exports and report.html (about 0.3 ms an item) about "
        "0.75; 20,000 items meet it"
    ),
    "cli-workers": (
        "bound: each worker process starts, imports DSPy and builds its judge (about 1 s of "
        "CPU each) on 2 cores that also run the coordinating process and the loopback "
        "server; the earlier code measures the same, paired (benchmarks/paired.py)"
    ),
    "runner-litellm": (
        "bound: CPU. A raw litellm.acompletion call costs 3.8 CPU ms in this LiteLLM version; "
        "jurist and DSPy add about 1.8 ms an item, as on the default engine, so one process "
        "whose event loop is busy reaches about 3.8 / 5.6 = 0.68 of raw LiteLLM's rate; the "
        "earlier code measures the same, paired (benchmarks/paired.py)"
    ),
    "cpu-own": (
        "bound: DSPy's work per call (its adapter formatting the prompt and parsing the reply, "
        "its request building) is most of it; the finished-verdict cache adds about 0.1 ms a "
        "fresh item (the item's key, a missed read, the verdict written), which makes a "
        "cached re-run about twice as fast; paired against the earlier code, 1.04 to 1.09x "
        "its CPU per fresh item (benchmarks/paired.py)"
    ),
    "memory": (
        "bound (RSS over the run, 100,000 items): the per-item table as it is built from the run "
        "store's rows (a list of Python objects per column until pandas holds it as Arrow arrays); "
        "a YAML task's gold file is read once into id and verdict columns, and the bootstrap "
        "resamples one code per item, its draws flat in the run's size (about a million at a time)"
    ),
}
"""What bounds a figure whose target is not met, found by profiling it (cProfile, -X importtime)."""


def bounded(met: str, key: str) -> str:
    """``met``, with what bounds the figure when it says no."""
    return met if met == "yes" or key not in BOUNDS else f"{met}; {BOUNDS[key]}"


def with_bound(row: Row | None, key: str) -> Row | None:
    """``row`` with what bounds its figure when its target is not met."""
    return None if row is None else (*row[:5], bounded(row[5], key))


def ratio_row(label: str, modes: dict[str, Any], top: str, bottom: str, target: float) -> Row | None:
    """``top``'s rate against ``bottom``'s; no target when ``target`` is 0."""
    if top not in modes or bottom not in modes:
        return None
    value, reference = modes[top]["rate"], modes[bottom]["rate"]
    ratio = value / reference
    cpu = modes[top].get("cpu_ms")
    return (
        label,
        f"{value:,.1f} items/s" + (f", {cpu:.2f} CPU ms/item" if cpu is not None else ""),
        f"{reference:,.1f} items/s",
        f"{ratio:.2f}×",
        f"≥ {target}×" if target else "",
        verdict(ratio, target, at_least=True) if target else "",
    )


def runner_rows(found: dict[str, Any], large: dict[str, Any] | None) -> list[Row | None]:
    modes = dict(found["modes"])
    modes["ideal"] = {"rate": found["ideal"]}
    sources = [source for source in (found, large) if source is not None]
    rows: list[Row | None] = [
        ratio_row(
            "runner (default engine) vs raw litellm.acompletion loop",
            modes,
            "runner-auto",
            "raw-litellm",
            0.95,
        ),
        ratio_row("  shell: `jurist judge` vs raw litellm", modes, "cli-auto", "raw-litellm", 0),
        ratio_row("runner vs the same HTTP client called directly", modes, "runner-auto", "raw-client", 0.9),
        ratio_row("  shell: `jurist judge` vs the HTTP client", modes, "cli-auto", "raw-client", 0),
        ratio_row("runner, fraction of ideal (concurrency / latency)", modes, "runner-auto", "ideal", 0.8),
    ]
    for source in sources:
        shell = {**source["modes"], "ideal": {"rate": source["ideal"]}}
        label = f"  shell: `jurist judge`, empty cache, {source['items']:,} items"
        rows.append(with_bound(ratio_row(label, shell, "cli-auto", "ideal", 0.8), "cli-auto"))
    rows += [
        with_bound(
            ratio_row("  shell: `jurist judge --workers N`, empty cache", modes, "cli-workers", "ideal", 0.8),
            "cli-workers",
        ),
        with_bound(
            ratio_row(
                "runner on the LiteLLM engine vs raw litellm", modes, "runner-litellm", "raw-litellm", 0.9
            ),
            "runner-litellm",
        ),
        ratio_row("runner vs DSPy's own `Module.batch` (no target)", modes, "runner-auto", "dspy-batch", 0),
    ]
    if "cached-runner" in modes:
        rate = modes["cached-runner"]["rate"]
        rows.append(
            (
                f"cached re-run (all hits), in-process, {found['items']:,} items",
                f"{rate:,.0f} items/s, {modes['cached-runner']['cpu_ms']:.2f} CPU ms/item",
                "",
                "",
                "≥ 2,000 items/s",
                verdict(rate, 2000, at_least=True),
            )
        )
    for mode, what, target in (
        ("cached-cli", "cached re-run into a new directory", 2000.0),
        ("resume-cli", "the finished run again", 0.0),
    ):
        for source in sources:
            if mode in source["modes"]:
                figures = source["modes"][mode]
                at_margin = figures.get("margin")
                shown = f"{figures['rate']:,.0f} items/s, {figures['cpu_ms']:.2f} CPU ms/item"
                if at_margin is not None:
                    shown = f"{at_margin:,.0f} items/s at the margin ({shown} overall)"
                value = at_margin if at_margin is not None else figures["rate"]
                rows.append(
                    (
                        f"  shell: `jurist judge`, {what}, {source['items']:,} items",
                        shown,
                        "",
                        "",
                        f"≥ {target:,.0f} items/s at the margin" if target else "",
                        bounded(verdict(value, target, at_least=True), mode) if target else "",
                    )
                )
    one, floor = found["modes"].get("one-cli"), found["modes"].get("imports")
    if one is not None:
        rows.append(
            (
                "  shell: `jurist judge`, one cached item into a new directory, the command run again",
                f"{one['seconds']:.2f} s, {one['cpu_ms']:.0f} CPU ms",
                f"{floor['seconds']:.2f} s (its imports alone)" if floor else "",
                f"{one['seconds'] / floor['seconds']:.2f}×" if floor else "",
                "≤ 1 s",
                bounded(verdict(one["seconds"], 1.0, at_least=False), "one-cli"),
            )
        )
    if "raw-client" in modes:
        client = modes["raw-client"]["cpu_ms"]
        measured = [("CPU per fresh item in jurist's own code (runner)", modes.get("runner-auto"))]
        measured += [
            (
                f"  shell: CPU per fresh item, whole command, {source['items']:,} items",
                source["modes"].get("cli-auto"),
            )
            for source in (found, large)
            if source is not None
        ]
        for label, figures in measured:
            if figures is not None:
                own = figures["cpu_ms"] - client
                rows.append(
                    (
                        label,
                        f"{own:.2f} ms",
                        f"{client:.2f} ms (HTTP client, subtracted)",
                        "",
                        "≤ 1.5 ms",
                        bounded(verdict(own, 1.5, at_least=False), "cpu-own"),
                    )
                )
    return rows


def startup_rows(found: dict[str, Any]) -> list[Row | None]:
    rows: list[Row | None] = []
    reference = found.get('python -c "import typer"')
    for label in ("jurist --help", "jurist gate QASET TRACES"):
        if label not in found:
            continue
        figures = found[label]
        met = figures["seconds"] <= 0.3 and figures["mb"] <= 60
        short = (
            []
            if met
            else [
                verdict(figures["seconds"], 0.3, at_least=False) if figures["seconds"] > 0.3 else "",
                verdict(figures["mb"], 60, at_least=False) if figures["mb"] > 60 else "",
            ]
        )
        rows.append(
            (
                f"`{label}` start-up",
                f"{figures['seconds']:.3f} s, {figures['mb']:.0f} MB",
                f"{reference['seconds']:.3f} s, {reference['mb']:.0f} MB (import typer)" if reference else "",
                "",
                "≤ 0.3 s, ≤ 60 MB",
                "yes" if met else " ".join(part for part in short if part),
            )
        )
    return rows


def memory_rows(found: dict[str, Any], runner: dict[str, Any] | None) -> list[Row | None]:
    rows: list[Row | None] = []
    for row in found["rows"]:
        if row["command"] == "reference":
            continue
        slope, reference = row["mib_per_1k"], row["reference_mib_per_1k"]
        ratio = slope / reference if reference > 0 else float("nan")
        rows.append(
            (
                f"memory while {row['command']} ({row['shape']}), "
                f"{row['small']['items']:,} → {row['large']['items']:,} items",
                f"{row['small']['mib']:.0f} → {row['large']['mib']:.0f} MiB, {slope:.2f} MiB/1k",
                f"{reference:.2f} MiB/1k (pandas: table once)",
                f"{ratio:.2f}×",
                "≤ 1.5× the table once",
                "yes" if ratio <= 1.5 else bounded(f"no, {ratio:.1f}× the table", "memory"),
            )
        )
    peaks = (runner or {}).get("memory_mb")
    if peaks:
        (small, low), (large, high) = sorted((int(k), v) for k, v in peaks.items())
        slope = (high - low) / (large - small) * 1000
        rows.append(
            (
                f"  runner in-process peak, {small:,} → {large:,} items",
                f"{low:.0f} → {high:.0f} MB, {slope:.2f} MB/1k",
                "",
                "",
                "",
                "",
            )
        )
    return rows


def metric_rows(found: list[dict[str, Any]]) -> list[Row | None]:
    rows: list[Row | None] = []
    for name, label in (("auroc", "AUROC on NumPy input"), ("cohens_kappa (int)", "Cohen's κ on int arrays")):
        runs = [row for row in found if row["metric"] == name]
        if not runs:
            continue
        row = max(runs, key=lambda entry: entry["n"])
        ratio = row["reference_ms"] / row["jurist_ms"]
        rows.append(
            (
                f"{label}, n = {row['n']:,}",
                f"{row['jurist_ms']:.2f} ms",
                f"{row['reference_ms']:.2f} ms (scikit-learn)",
                f"{ratio:.2f}×",
                "≥ 1×",
                verdict(ratio, 1.0, at_least=True),
            )
        )
    return rows


def table(root: Path) -> list[Row]:
    runner, large = load(root, "runner.json"), load(root, "runner-large.json")
    sections: list[tuple[Any, Callable[[Any], list[Row | None]]]] = [
        (runner, lambda found: runner_rows(found, large)),
        (load(root, "startup.json"), startup_rows),
        (load(root, "memory.json"), lambda found: memory_rows(found, runner)),
        (load(root, "metrics.json"), metric_rows),
    ]
    rows: list[Row] = []
    for found, make in sections:
        if found is not None:
            rows += [row for row in make(found) if row is not None]
    return rows


def describe(root: Path) -> str:
    runner = load(root, "runner.json")
    if runner is None:
        return ""
    return (
        f"loopback server, {runner['latency'] * 1000:.0f} ms latency, concurrency {runner['concurrency']}, "
        f"{runner['items']:,} distinct RAGBench items, median of {runner['rounds']} round(s)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, one round: a smoke check")
    parser.add_argument("--items", type=int, default=2000, help="items of the throughput rows")
    parser.add_argument("--large", type=int, help="items of the shell-only rows (default 20,000; 0: none)")
    parser.add_argument("--out", type=Path, help="keep the JSON files in this directory")
    parser.add_argument(
        "--read", type=Path, help="print the table of JSON files kept before; measure nothing"
    )
    args = parser.parse_args()
    if args.large is None:
        args.large = 0 if args.quick else 20_000
    if args.read:
        root = args.read
    else:
        root = args.out or Path(tempfile.mkdtemp(prefix="jurist-table-"))
        root.mkdir(parents=True, exist_ok=True)
        load_before = os.getloadavg()
        # Every script times bytecode, as an install has it (also under PYTHONDONTWRITEBYTECODE).
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(HERE.parent / "src")], check=True)
        measure(args, root)
        (root / "load.json").write_text(json.dumps({"before": load_before, "after": os.getloadavg()}))
    load_average = load(root, "load.json")
    print()
    print(f"{describe(root)}; {os.cpu_count()} cores", end="")
    if load_average:
        before, after = (", ".join(f"{x:.2f}" for x in load_average[key]) for key in ("before", "after"))
        print(f"; load average before {before}, after {after}", end="")
    print("\n")
    print("| figure | jurist | reference | ratio | target | met? |")
    print("|---|---|---|---|---|---|")
    for label, *cells in table(root):
        shown = "↳ " + label.strip() if label.startswith("  ") else label  # a row under the one above
        print("| " + " | ".join([shown, *cells]) + " |")


if __name__ == "__main__":
    main()
