"""Peak memory and wall time of scoring a run and writing its exports, per 1k items.

For each size N, two run directories of N recorded items are built through the real
run store (:class:`~jurist.runner.ResultStore` and its :class:`~jurist.runner.store.ResultWriter`):

- **label**: a YAML label task with reasoning (the items a model judge would record:
  verdict, a sentence of reasoning, tokens and cost), scored against a gold file of N rows;
- **ragbench**: RAGBench items whose outputs are the offline baseline's TRACe labels of
  the bundled sample rows (sentence keys, per-sentence support, scores; about 4 KB each).

Each command then runs in a fresh process, started from here as a user would start it,
and the benchmark reads that process's peak resident memory (``ru_maxrss`` of the child,
from ``wait4``) and its wall time:

- **score**: ``jurist score TASK RUN`` (the per-item table, the summary, the report);
- **score + exports**: the task's ``score`` with ``write=True`` (what ``jurist judge`` does
  after judging): ``results.jsonl``, ``items.csv``, ``items.parquet``, ``summary.json``,
  ``report.md``;
- **reference**: pandas alone on the same per-item table: ``pd.read_parquet(items.parquet)``
  then ``to_csv`` (the table held in memory once, one export written);
- **imports**: the interpreter with jurist's task layer, pandas and pyarrow imported (the
  floor every command starts from).

"MiB per 1k items" is the slope between the two sizes, (peak(N₂) − peak(N₁)) / (N₂ − N₁)
× 1000, so the fixed cost of the interpreter and imports cancels out. The ratio is
jurist's slope over the reference's. Usage:

    python benchmarks/memory.py [--items 10000 100000] [--json FILE]

``--json`` also writes the figures to a file (read by ``benchmarks/table.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TASK = """\
name: bench-custodian
instructions: Say which kind of heritage institution the text describes.
inputs: [text]
output:
  kind: label
  labels: [archive, library, museum, other]
  reasoning: true
gold: gold
"""

KINDS = ("archive", "library", "museum", "other")

EXPORT = (
    "import sys\n"
    "from jurist.tasks import get_task\n"
    "task = get_task(sys.argv[1])\n"
    "gold = sys.argv[3] if len(sys.argv) > 3 else None\n"
    "task.score(sys.argv[2], task.options(), gold=gold, write=True)\n"
)
REFERENCE = "import sys\nimport pandas as pd\npd.read_parquet(sys.argv[1]).to_csv(sys.argv[2], index=False)\n"
IMPORTS = "import jurist.tasks, jurist.runner, pandas, pyarrow.parquet\n"


def label_results(root: Path, count: int) -> tuple[list[str], Any]:
    """The task file and gold data of the label run, and its recorded results (1 in 50 failed)."""
    from jurist.schemas import ItemResult, Usage

    task = root / "task.yaml"
    task.write_text(TASK, encoding="utf-8")
    data = root / "data.jsonl"
    with data.open("w", encoding="utf-8") as handle:
        for i in range(count):
            handle.write(
                json.dumps({"id": f"item-{i:06d}", "text": f"Record {i}.", "gold": KINDS[i % 4]}) + "\n"
            )

    def results() -> Any:
        for i in range(count):
            verdict = KINDS[(i // 4) % 4] if i % 7 in (1, 4) else KINDS[i % 4]
            usage = Usage(calls=1, prompt_tokens=180 + i % 40, completion_tokens=40 + i % 9, cost=2.1e-5)
            if i % 50 == 49:
                yield ItemResult(
                    id=f"item-{i:06d}",
                    status="failed",
                    error="reply had no verdict field",
                    error_type="ParseError",
                    raw=['{"reasoning": "cut'],
                    latency_s=0.8,
                    usage=usage,
                )
                continue
            reasoning = (
                f"The text of record {i} names a {verdict} in town {i % 997} that keeps collections "
                f"since {1800 + i % 200}; that is what a {verdict} does."
            )
            raw = json.dumps({"reasoning": reasoning, "verdict": verdict})
            yield ItemResult(
                id=f"item-{i:06d}",
                status="ok",
                output={"verdict": verdict, "reasoning": reasoning},
                raw=[raw],
                latency_s=0.5 + (i % 100) / 100,
                usage=usage,
            )

    return [str(task), str(data)], results()


def ragbench_results(count: int) -> tuple[list[str], Any]:
    """The ragbench run: the baseline's outputs of the bundled sample rows, repeated."""
    from jurist.datasets.ragbench import load_ragbench
    from jurist.datasets.samples import sample_path
    from jurist.schemas import ItemResult
    from jurist.tasks.ragbench import scoring

    rows = load_ragbench(sample_path("ragbench"))
    outputs = [scoring.baseline_output(**scoring.ragbench_inputs(row)) for row in rows]

    def results() -> Any:
        for i in range(count):
            yield ItemResult(id=f"rb-{i:06d}", status="ok", output=outputs[i % len(outputs)], latency_s=0.01)

    return ["ragbench"], results()


def record(run: Path, results: Any) -> None:
    """Write ``results`` into ``run/results.sqlite`` through the run store's writer thread."""
    from jurist.runner import RESULTS_DB, ResultStore
    from jurist.runner.store import ResultWriter

    run.mkdir(parents=True)
    with ResultStore(run / RESULTS_DB, judge_fingerprint="bench") as store, ResultWriter(store) as writer:
        for result in results:
            writer.submit(result)


def peak(command: list[str]) -> tuple[float, float]:
    """Peak resident memory (MiB) and wall seconds of ``command`` run to its end."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 3):  # 3: the run holds failed items (listed, not scored)
        stderr = process.stderr.read().decode() if process.stderr else ""
        raise RuntimeError(f"{' '.join(command)} exited {code}: {stderr[-2000:]}")
    if process.stderr:
        process.stderr.close()
    return usage.ru_maxrss / 1024, elapsed  # ru_maxrss is in KiB on Linux


def build(shape: str, count: int, root: Path) -> list[str]:
    """Record the ``shape`` run of ``count`` items under ``root``; the task (and gold file)."""
    root.mkdir()
    if shape == "label":
        names, results = label_results(root, count)
    else:
        names, results = ragbench_results(count)
    record(root / "run", results)
    return names


def measure(shape: str, count: int, base: Path) -> dict[str, tuple[float, float]]:
    root = base / f"{shape}-{count}"
    python = sys.executable
    # Built in a child process: a child's peak memory counts its parent's at the fork, so
    # the parent stays small (it imports neither jurist nor pandas).
    built = subprocess.run(
        [python, __file__, "--build", shape, str(count), str(root)],
        check=True,
        capture_output=True,
        text=True,
    )
    names = json.loads(built.stdout)
    if shape == "label":
        task, gold = names
        args = [task, str(root / "run")]
        score = [*args, "--gold", gold]
        export = [*args, gold]
    else:
        score = export = [names[0], str(root / "run")]
    figures = {
        "score": peak([python, "-m", "jurist", "score", *score]),
        "score + exports": peak([python, "-c", EXPORT, *export]),
    }
    figures["reference"] = peak(
        [python, "-c", REFERENCE, str(root / "run" / "items.parquet"), str(root / "ref.csv")]
    )
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, nargs=2, default=[10_000, 100_000], metavar=("N1", "N2"))
    parser.add_argument("--build", nargs=3, metavar=("SHAPE", "COUNT", "DIR"), help=argparse.SUPPRESS)
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    if args.build:
        shape, count, root = args.build
        print(json.dumps(build(shape, int(count), Path(root))))
        return
    small, large = args.items
    floor = peak([sys.executable, "-c", IMPORTS])[0]
    rows: list[tuple[str, str, dict[str, tuple[float, float]], dict[str, tuple[float, float]]]] = []
    with tempfile.TemporaryDirectory(prefix="jurist-memory-") as tmp:
        for shape in ("label", "ragbench"):
            first, second = measure(shape, small, Path(tmp)), measure(shape, large, Path(tmp))
            print(f"measured {shape}", file=sys.stderr)
            for name in first:
                rows.append((shape, name, first[name], second[name]))
    print(f"imports only: {floor:,.0f} MiB peak")
    print(
        f"| run | command | {small:,} items: MiB, s | {large:,} items: MiB, s | MiB per 1k items "
        "| × reference (per 1k) |"
    )
    print("|---|---|---:|---:|---:|---:|")
    slopes = {(shape, name): (b[0] - a[0]) / (large - small) * 1000 for shape, name, a, b in rows}
    for shape, name, a, b in rows:
        slope = slopes[(shape, name)]
        reference = slopes[(shape, "reference")]
        ratio = f"{slope / reference:.2f}" if reference > 0 else "n/a"
        cells = f"{a[0]:,.0f}, {a[1]:.1f} | {b[0]:,.0f}, {b[1]:.1f}"
        print(f"| {shape} | {name} | {cells} | {slope:.2f} | {ratio} |")
    if args.json:
        found = [
            {
                "shape": shape,
                "command": name,
                "small": {"items": small, "mib": a[0], "seconds": a[1]},
                "large": {"items": large, "mib": b[0], "seconds": b[1]},
                "mib_per_1k": slopes[(shape, name)],
                "reference_mib_per_1k": slopes[(shape, "reference")],
            }
            for shape, name, a, b in rows
        ]
        args.json.write_text(json.dumps({"imports_mib": floor, "rows": found}, indent=2), encoding="utf-8")


if __name__ == "__main__":
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    main()
