"""Throughput and peak memory of ``jurist gate`` at 10k, 100k and 1M traces.

Writes a synthetic gold set and trace files to a temporary directory, then, for each size,
runs in a fresh subprocess (so each peak is its own):

- ``jurist``: the gates task's scoring and Markdown report (what ``jurist gate`` does);
- ``json``: a plain ``json.loads`` of every line (the reference);
- ``orjson``: a plain ``orjson.loads`` of every line (the parse floor).

Throughput is traces per second of wall time inside the subprocess (imports excluded);
peak memory is the subprocess's maximum resident set size, and its growth over the
resident size after imports.

Usage:
    python benchmarks/gates_throughput.py [--sizes 10000 100000 1000000] [--gold 1000]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MODES = ("jurist", "json", "orjson")


def _rss_kb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def write_gold(path: Path, count: int, rng: random.Random) -> None:
    """A gold set of ``count`` questions, 70% answerable, half of them with a gold claim."""
    rows = []
    for i in range(count):
        answerable = rng.random() < 0.7
        row: dict[str, object] = {
            "qid": f"q{i}",
            "q": f"What does section {i} of the handbook say about topic {i % 97}?",
            "answerable": answerable,
            "gold_ids": [f"p{i}#1", f"p{i}#2"] if answerable else [],
        }
        if answerable and i % 2 == 0:
            row["gold_claim"] = f"Section {i} requires a signed form for topic {i % 97}."
        rows.append(row)
    path.write_text(json.dumps(rows, indent=1), encoding="utf-8")


def _trace(i: int, n_gold: int, rng: random.Random) -> dict[str, object]:
    g = rng.randrange(n_gold)
    kind = rng.random()
    trace: dict[str, object] = {
        "ts": 1_700_000_000 + i,
        "q": f"What does section {g} of the handbook say about topic {g % 97}?",
        "chunks": [{"id": f"p{g}#1"}, {"id": f"p{g + 1}#1"}, {"id": f"p{g + 2}#3"}],
        "ok": True,
    }
    if rng.random() < 0.5:
        trace["qid"] = f"q{g}"
    cited = f"p{g}#1" if rng.random() < 0.8 else f"p{g + 1}#1"
    body = f"- Section {g} requires a signed form for topic {g % 97}; the form is filed with the office."
    if kind < 0.55:
        trace["answer"] = f"{body}\n- citations: [{cited}, p{g + 2}#3]"
    elif kind < 0.80:
        trace["answer"] = body
        trace["citations"] = [cited, f"p{g + 2}#3"]
    elif kind < 0.95:
        trace["answer"] = "not in context"
    else:
        trace["answer"] = body  # no citations: not compliant
    if rng.random() < 0.01:
        trace["q"] = f"An unknown question {i}?"
        trace.pop("qid", None)
    return trace


def write_traces(paths: dict[int, Path], n_gold: int, rng: random.Random) -> None:
    """Write one trace file per size; the smaller files are prefixes of the largest."""
    largest = max(paths)
    handles = {size: path.open("w", encoding="utf-8") for size, path in paths.items()}
    try:
        for i in range(largest):
            line = json.dumps(_trace(i, n_gold, rng)) + "\n"
            for size, handle in handles.items():
                if i < size:
                    handle.write(line)
    finally:
        for handle in handles.values():
            handle.close()


def worker(mode: str, gold: str, traces: str) -> None:
    """Run one mode in this process and print a JSON line of its figures."""
    if mode == "jurist":
        from jurist.tasks.gates.render import render_markdown
        from jurist.tasks.gates.scoring import score_traces

        base = _rss_kb()
        start = time.perf_counter()
        report = score_traces(gold, traces)
        render_markdown(report)
        seconds = time.perf_counter() - start
        count = report.traces_read
    else:
        import orjson

        loads = json.loads if mode == "json" else orjson.loads
        base = _rss_kb()
        start = time.perf_counter()
        count = 0
        with open(traces, "rb") as handle:
            for raw in handle:
                loads(raw)
                count += 1
        seconds = time.perf_counter() - start
    print(json.dumps({"traces": count, "seconds": seconds, "peak_kb": _rss_kb(), "base_kb": base}))


def run(mode: str, gold: Path, traces: Path) -> dict[str, float]:
    """Run one mode in a fresh interpreter and return its figures."""
    cmd = [sys.executable, __file__, "--worker", mode, str(gold), str(traces)]
    done = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    """Generate the data, run every mode at every size, print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--gold", type=int, default=1000, help="gold questions (default 1000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--worker", nargs=3, metavar=("MODE", "GOLD", "TRACES"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(*args.worker)
        return
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="jurist-gates-bench-") as tmp:
        root = Path(tmp)
        gold = root / "gold.json"
        write_gold(gold, args.gold, rng)
        paths = {size: root / f"traces-{size}.jsonl" for size in sorted(args.sizes)}
        started = time.perf_counter()
        write_traces(paths, args.gold, rng)
        print(f"data: {args.gold} gold questions; traces written in {time.perf_counter() - started:.1f}s")
        print(f"python {sys.version.split()[0]}, one process per run\n")
        print(
            "| traces | file MB | jurist traces/s | jurist peak RSS MB (growth) | json.loads traces/s"
            " | jurist/json | orjson.loads traces/s | jurist/orjson |"
        )
        print("|---:|---:|---:|---:|---:|---:|---:|---:|")
        for size, path in paths.items():
            figures = {mode: run(mode, gold, path) for mode in MODES}
            rate = {mode: f["traces"] / f["seconds"] for mode, f in figures.items()}
            mine = figures["jurist"]
            peak_mb = mine["peak_kb"] / 1024
            growth_mb = (mine["peak_kb"] - mine["base_kb"]) / 1024
            print(
                f"| {size:,} | {path.stat().st_size / 1e6:.0f} | {rate['jurist']:,.0f}"
                f" | {peak_mb:.1f} ({growth_mb:+.1f})"
                f" | {rate['json']:,.0f} | {rate['jurist'] / rate['json']:.2f}"
                f" | {rate['orjson']:,.0f} | {rate['jurist'] / rate['orjson']:.2f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
