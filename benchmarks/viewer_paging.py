"""How ``jurist view`` serves a large run: start-up, pages, an item, and its memory.

For each size N, a YAML label task judges N items with its offline baseline (rules; no
model, no network) into a run directory, as ``jurist judge`` would. Then ``jurist view``
is started as a subprocess on a free 127.0.0.1 port (what users run), and the benchmark
times, over HTTP:

- **start-up**: from starting the process to the first answered request;
- **first page**: the run page (report, figures, first 50 items) the first time, and again;
- **page near the end**: 50 items at offset N - 100;
- **filtered page**: the items the judge got wrong (``show=disagree``), first and last page;
- **sorted page**: items sorted by verdict, a page in the middle;
- **item page**: one item in full (its recorded call and row);

and reads the server's resident memory (RSS) at the end. "cold" is the first request of a
kind (it reads the columns it filters or sorts by), "warm" the median of five more. The
per-item table's row groups are printed too: a page in file order reads only the row
groups that hold it. Usage:

    python benchmarks/viewer_paging.py [--items 10000 100000]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
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
baseline:
  rules:
    - {pattern: "(?i)archive", value: archive}
    - {pattern: "(?i)library", value: library}
    - {pattern: "(?i)museum", value: museum}
  default: other
"""

KINDS = ("archive", "library", "museum", "other")


def write_data(path: Path, count: int) -> None:
    """``count`` rows; the rules get about one in four wrong (the text names another kind)."""
    with path.open("w", encoding="utf-8") as handle:
        for i in range(count):
            gold = KINDS[i % 4]
            named = KINDS[(i // 4) % 4] if i % 7 in (1, 4) else gold
            text = f"Record {i}: the {named} of town {i % 997} keeps collections since {1800 + i % 200}."
            handle.write(json.dumps({"id": f"item-{i:06d}", "text": text, "gold": gold}) + "\n")


def make_run(root: Path, count: int) -> tuple[Path, float]:
    """Judge ``count`` items with the task's baseline into ``root / "run"``; the seconds it took."""
    from jurist.verbs import judge

    task = root / "task.yaml"
    task.write_text(TASK, encoding="utf-8")
    data = root / "data.jsonl"
    write_data(data, count)
    start = time.perf_counter()
    judge(task, data, out=root / "runs" / "run", progress=False)
    return root / "runs" / "run", time.perf_counter() - start


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def get(url: str) -> float:
    """Seconds to fetch ``url`` in full (it must answer 200)."""
    start = time.perf_counter()
    with urllib.request.urlopen(url, timeout=120) as response:
        response.read()
        if response.status != 200:
            raise RuntimeError(f"{url}: HTTP {response.status}")
    return time.perf_counter() - start


def rss_mib(pid: int) -> float:
    """The resident memory of process ``pid`` in MiB (psutil if installed, else /proc)."""
    try:
        import psutil

        return float(psutil.Process(pid).memory_info().rss) / 2**20
    except ImportError:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def timed(fetch: Callable[[], float], repeats: int = 5) -> tuple[float, float]:
    """Milliseconds of the first call and the median of ``repeats`` more."""
    cold = fetch()
    warm = statistics.median(fetch() for _ in range(repeats))
    return cold * 1000, warm * 1000


def measure(count: int, base: Path) -> dict[str, Any]:
    import pyarrow.parquet as pq

    root = base / str(count)
    root.mkdir()
    run, judged = make_run(root, count)
    metadata = pq.ParquetFile(run / "items.parquet").metadata
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    command = [sys.executable, "-m", "jurist", "view", str(root / "runs"), "--port", str(port), "--no-open"]
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        while True:
            try:
                get(url)
                break
            except OSError:
                if process.poll() is not None:
                    raise RuntimeError(
                        process.stderr.read().decode() if process.stderr else "exited"
                    ) from None
                time.sleep(0.02)
        startup = time.perf_counter() - start
        page = f"{url}run?id=run&limit=50"
        times = {
            "first page": timed(lambda: get(page)),
            "page near the end": timed(lambda: get(f"{page}&offset={count - 100}")),
            "filtered: first": timed(lambda: get(f"{page}&show=disagree")),
            "filtered: last": timed(lambda: get(f"{page}&show=disagree&offset={count}")),
            "sorted: middle": timed(lambda: get(f"{page}&sort=verdict&offset={count // 2}")),
            "item page": timed(lambda: get(f"{url}item?run=run&id=item-{count // 2:06d}")),
        }
        memory = rss_mib(process.pid)
    finally:
        process.terminate()
        process.wait(timeout=30)
    return {
        "items": count,
        "judged_s": judged,
        "row_groups": metadata.num_row_groups,
        "startup_ms": startup * 1000,
        "times": times,
        "rss": memory,
        "parquet_mib": (run / "items.parquet").stat().st_size / 2**20,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, nargs="+", default=[10_000, 100_000])
    args = parser.parse_args(argv)
    results = []
    with tempfile.TemporaryDirectory(prefix="jurist-viewer-") as tmp:
        for count in args.items:
            results.append(measure(count, Path(tmp)))
            print(f"measured {count:,} items", file=sys.stderr)
    header = " | ".join(f"{r['items']:,} items" for r in results)
    print(f"| ms (cold / warm median) | {header} |")
    print("|---" * (len(results) + 1) + "|")
    print("| start-up | " + " | ".join(f"{r['startup_ms']:,.0f}" for r in results) + " |")
    for name in results[0]["times"]:
        cells = " | ".join(f"{r['times'][name][0]:,.1f} / {r['times'][name][1]:,.1f}" for r in results)
        print(f"| {name} | {cells} |")
    print("| server RSS (MiB) | " + " | ".join(f"{r['rss']:,.0f}" for r in results) + " |")
    print(
        "| items.parquet (MiB, row groups) | "
        + " | ".join(f"{r['parquet_mib']:,.1f}, {r['row_groups']}" for r in results)
        + " |"
    )
    print("| judging the run (s, baseline) | " + " | ".join(f"{r['judged_s']:,.1f}" for r in results) + " |")


if __name__ == "__main__":
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    main()
