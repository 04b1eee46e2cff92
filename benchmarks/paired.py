"""The same throughput rows on two checkouts of jurist, in turn, against one server.

A figure taken today cannot be set beside one taken on another day: the machine's speed
moves (the same HTTP client has measured 0.35 and 0.50 CPU ms an item on different days).
This script measures this checkout (``A``) and a reference checkout (``B``, e.g. an earlier
commit in a ``git worktree``) in alternation, A B B A A B ..., each run in its own process
against the same loopback server, and prints each row's median for both and the median of
the per-round ratios A/B.

Rows (``runner_throughput.py`` of each checkout does the measuring, so each uses its own
code end to end):

- ``runner auto`` / ``runner litellm``: the runner in-process on a fresh cache, on DSPy's
  default engine and on LiteLLM (items/s and CPU ms an item);
- ``shell fresh``: ``jurist judge ragbench DATA`` from the shell on an empty cache;
- ``shell cached``: the same into a new run directory, every answer cached;
- ``shell one``: one cached item into a new run directory, the command run twice before;
- ``shell --workers 2``: ``jurist judge ... --workers 2`` on an empty cache.

The ``jurist`` command of each checkout is ``python -m jurist`` with ``PYTHONPATH`` set to its
``src``; the installed dependencies are this Python's. Usage:

    git worktree add --detach ../ref REV
    python benchmarks/paired.py ../ref [--items 2000] [--rounds 4] [--rows runner,shell]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import runner_throughput as bench  # noqa: E402 - the benchmark next to this file


def checkout_env(root: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(root / "src"), bench.KEY_ENV: "sk-bench"}


def runner_row(root: Path, engine: str, base: str, data: Path, warmup: Path, work: Path) -> dict[str, float]:
    """The runner in-process on ``engine`` with a fresh cache, measured by ``root``'s own script."""
    command = [
        sys.executable,
        str(root / "benchmarks" / "runner_throughput.py"),
        "--worker",
        "runner",
        "--engine",
        engine,
        "--api-base",
        base,
        "--data",
        str(data),
        "--warmup",
        str(warmup),
        "--out",
        str(work / "run"),
        "--cache-dir",
        str(work / "cache"),
    ]
    done = subprocess.run(command, capture_output=True, text=True, env=checkout_env(root), check=False)
    if done.returncode != 0:
        raise SystemExit(f"runner on {root} failed:\n{done.stderr[-3000:]}")
    found = json.loads(done.stdout.strip().splitlines()[-1])
    if found["failed"] or found["cache_hits"]:
        raise SystemExit(f"runner on {root} was meant to call the server for every item: {found}")
    return {"items/s": found["items"] / found["seconds"], "cpu ms/item": 1000 * found["cpu"] / found["items"]}


def shell_run(
    root: Path, data: Path, out: Path, config: Path, extra: tuple[str, ...] = ()
) -> tuple[float, float]:
    """Wall and CPU seconds (its worker processes' included) of ``jurist judge ragbench DATA``
    run by ``root``'s code."""
    before = os.times()
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "jurist", "judge", bench.TASK, str(data), "--out", str(out)]
        + ["--config", str(config), "--no-progress", *extra],
        capture_output=True,
        text=True,
        env=checkout_env(root),
        check=False,
    )
    wall = time.perf_counter() - start
    after = os.times()
    if done.returncode != 0:
        raise SystemExit(f"jurist judge on {root} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return wall, (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )


def shell_rows(
    root: Path, base: str, data: Path, one: Path, work: Path, items: int
) -> dict[str, dict[str, float]]:
    """Fresh, cached re-run, one cached item and two workers from the shell, each in a new run
    directory."""
    work.mkdir(parents=True, exist_ok=True)
    config = bench.write_config(
        work / "judge.yaml", base=base, engine="auto", concurrency=32, cache_dir=work / "cache"
    )
    fresh = shell_run(root, data, work / "fresh", config)
    cached = shell_run(root, data, work / "cached", config)
    for warm in range(2):
        shell_run(root, one, work / f"one-warm-{warm}", config)
    single = shell_run(root, one, work / "one", config)
    scaled = bench.write_config(
        work / "workers.yaml", base=base, engine="auto", concurrency=32, cache_dir=work / "workers-cache"
    )
    workers = shell_run(root, data, work / "workers", scaled, ("--workers", "2"))
    margin = (items - 1) / max(cached[0] - single[0], 1e-9)
    return {
        "shell fresh": {"items/s": items / fresh[0], "cpu ms/item": 1000 * fresh[1] / items},
        "shell cached": {"items/s": items / cached[0], "margin items/s": margin},
        "shell one": {"seconds": single[0], "cpu s": single[1]},
        "shell --workers 2": {"items/s": items / workers[0], "cpu ms/item": 1000 * workers[1] / items},
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("reference", type=Path, help="the reference checkout (its src/ and benchmarks/)")
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=4, help="rounds; each runs A and B once")
    parser.add_argument("--rows", default="runner,shell", help="runner, shell or both")
    parser.add_argument("--json", type=Path, help="also write every round's figures here")
    args = parser.parse_args()
    checkouts = {"A": HERE.parent, "B": args.reference.resolve()}
    if not (checkouts["B"] / "src" / "jurist").is_dir():
        raise SystemExit(f"{checkouts['B']} is not a jurist checkout (no src/jurist)")
    for checkout in checkouts.values():
        bench.compile_jurist(checkout / "src" / "jurist")
    rows = set(args.rows.split(","))
    root = Path(tempfile.mkdtemp(prefix="jurist-paired-"))
    reply = root / "reply.txt"
    reply.write_text(bench.REPLY, encoding="utf-8")
    server, base = bench.start_server(0.1, reply)
    rounds: list[dict[str, dict[str, dict[str, float]]]] = []
    try:
        for number in range(args.rounds):
            order = ("A", "B") if number % 2 == 0 else ("B", "A")
            found: dict[str, dict[str, dict[str, float]]] = {"A": {}, "B": {}}
            for name in order:
                work = root / f"round-{number}-{name}"
                work.mkdir()
                # Distinct texts in every run: no cache remembers another run's answers.
                data, warmup, one = work / "data.jsonl", work / "warmup.jsonl", work / "one.jsonl"
                bench.write_items(data, args.items, prefix=f"r{number}{name}")
                bench.write_items(warmup, 64, prefix=f"w{number}{name}")
                bench.write_items(one, 1, prefix=f"r{number}{name}")  # the data's first row: cached by then
                if "runner" in rows:
                    for engine in ("auto", "litellm"):
                        found[name][f"runner {engine}"] = runner_row(
                            checkouts[name], engine, base, data, warmup, work / f"runner-{engine}"
                        )
                if "shell" in rows:
                    found[name].update(
                        shell_rows(checkouts[name], base, data, one, work / "shell", args.items)
                    )
                shutil.rmtree(work, ignore_errors=True)
                print(f"round {number + 1} {name}: {json.dumps(found[name])}", file=sys.stderr, flush=True)
            rounds.append(found)
    finally:
        server.terminate()
        shutil.rmtree(root, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps(rounds, indent=2), encoding="utf-8")
    report(rounds, checkouts)


def report(rounds: list[dict[str, dict[str, dict[str, float]]]], checkouts: dict[str, Path]) -> None:
    print(f"A = {checkouts['A']}, B = {checkouts['B']}; {len(rounds)} rounds, medians")
    print("| row | figure | A | B | A/B (median of rounds) |")
    print("|---|---|---|---|---|")
    for row, figures in rounds[0]["A"].items():
        for figure in figures:
            a = [found["A"][row][figure] for found in rounds]
            b = [found["B"][row][figure] for found in rounds]
            ratio = statistics.median(x / y for x, y in zip(a, b, strict=True))
            middle = f"{statistics.median(a):.2f} | {statistics.median(b):.2f}"
            print(f"| {row} | {figure} | {middle} | {ratio:.2f}× |")


if __name__ == "__main__":
    main()
