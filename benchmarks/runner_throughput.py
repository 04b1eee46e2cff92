"""Judging throughput on equal work, side by side: raw clients, DSPy, and jurist.

Every mode sends the same distinct prompts (the ChatAdapter messages jurist's RAGBench
judge sends for each item) to one loopback OpenAI-compatible server process, at the same
concurrency, each mode in its own process:

- ``raw litellm``: ``litellm.acompletion`` on one event loop, bounded by a semaphore;
- ``raw client``: the HTTP client of DSPy's default engine (lm15's ``AsyncLMRouter``, what
  a jurist judge on ``engine: auto`` sends through) called directly, the same way;
- ``dspy batch``: ``Module.batch`` of jurist's RAGBench program on a plain ``dspy.LM``
  (default engine, DSPy's own cache in a fresh directory);
- ``runner``: jurist's ``run_items`` in-process with the RAGBench judge and a fresh cache
  (judging only: no scoring, no exports), on the default engine and on LiteLLM;
- ``CLI``: ``jurist judge ragbench DATA --out DIR --config FILE --no-progress`` timed from
  outside, as users see it: start-up, reading, judging, scoring and exports included;
- ``cached``: the same judgments into a new run directory, every answer from the disk
  cache (in-process runner, and CLI); ``resume``: the CLI on a finished run directory;
- ``one``: the CLI on one cached item into a new run directory (the command's fixed cost:
  start-up, imports, scoring, exports, ``report.html``), the same command run twice before
  (not timed) as a user re-running it does, so its verdict and its report's figures are
  cached; beside the imports alone; the shell rows are also given *at the margin*,
  ``(items - 1) / (seconds - one item's seconds)``;
- ``CLI, N workers``: ``jurist judge ... --workers N`` (N processes, the same total
  concurrency), fresh cache; ``CLI on Ray``: ``jurist judge ... --backend ray
  --ray-address ADDR`` on a Ray instance this script starts on 127.0.0.1 before timing
  (``--ray``; its worker processes' CPU time is not in the CPU column), fresh cache.

In-process modes first send warm-up requests (other prompts, not timed); the CLI modes are
timed whole. CPU per item is the process's CPU time (user + system) over the timed part
divided by the items; jurist's own CPU per item is the runner's minus the raw client's.
Every figure is the median of ``--repeat`` rounds; the modes of a round run one after the
other against the same server. Usage:

    python benchmarks/runner_throughput.py [--items 2000] [--concurrency 32] [--latency 0.1]
        [--repeat 3] [--memory] [--workers N] [--ray] [--cli-only] [--json FILE]

``--cli-only`` times only the ``jurist judge`` rows (fresh, cached, resume), e.g. at 20,000
items; ``--json`` writes the medians for ``benchmarks/table.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPLY = (
    "\n\n".join(
        f"[[ ## {name} ## ]]\n{value}"
        for name, value in [
            ("relevance_explanation", "None relevant."),
            ("all_relevant_sentence_keys", "[]"),
            ("overall_supported_explanation", "Not checked."),
            ("overall_supported", "False"),
            ("sentence_support_information", "[]"),
            ("all_utilized_sentence_keys", "[]"),
        ]
    )
    + "\n\n[[ ## completed ## ]]"
)
MODEL = "openai/bench-judge"
KEY_ENV = "JURIST_BENCH_KEY"
TASK = "ragbench"


def write_items(path: Path, count: int, *, prefix: str = "case") -> None:
    """``count`` RAGBench rows with distinct texts (so distinct prompts and cache keys)."""
    with open(path, "w", encoding="utf-8") as handle:
        for i in range(count):
            row = {
                "id": f"{prefix}-{i}",
                "question": f"What happened in {prefix} {i}?",
                "documents": [
                    f"The {prefix} {i} was opened in {1900 + i % 100}. It closed later.",
                    "Other text.",
                ],
                "response": f"The {prefix} {i} was opened in {1900 + i % 100}.",
            }
            handle.write(json.dumps(row) + "\n")


def judge_config(args: argparse.Namespace, *, engine: str, cache_dir: str) -> Any:
    from jurist.judges.config import JudgeConfig

    return JudgeConfig(
        model=MODEL,
        api_base=args.api_base,
        api_key_env=KEY_ENV,
        engine=engine,
        concurrency=args.concurrency,
        cache_dir=Path(cache_dir),
    )


def task_items(path: str) -> list[Any]:
    from jurist.tasks import get_task

    task = get_task(TASK)
    options = task.options()
    return list(task.items(task.read(path, options), options))


def requests_of(path: str, args: argparse.Namespace) -> list[list[dict[str, Any]]]:
    """The chat messages jurist's judge sends for each item of ``path`` (captured offline)."""
    from jurist.judges.prompting import capture_messages
    from jurist.tasks import get_task

    task = get_task(TASK)
    program = task.program(task.options())
    config = judge_config(args, engine="auto", cache_dir=args.cache_dir or ".")
    return [capture_messages(program, config, item.inputs) for item in task_items(path)]


class Timed:
    """Wall time and process CPU time (user + system) of a block."""

    def __enter__(self) -> Timed:
        self.wall = time.perf_counter()
        self.cpu = time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall = time.perf_counter() - self.wall
        self.cpu = time.process_time() - self.cpu


async def bounded(concurrency: int, jobs: list[Any], call: Any) -> None:
    semaphore = asyncio.Semaphore(concurrency)

    async def one(job: Any) -> None:
        async with semaphore:
            await call(job)

    await asyncio.gather(*(one(job) for job in jobs))


def worker_raw_litellm(args: argparse.Namespace) -> dict[str, Any]:
    import litellm

    warm, work = requests_of(args.warmup, args), requests_of(args.data, args)

    async def call(messages: list[dict[str, Any]]) -> None:
        await litellm.acompletion(
            model=MODEL,
            messages=messages,
            api_base=args.api_base,
            api_key=os.environ[KEY_ENV],
            temperature=0.0,
            max_tokens=4000,
        )

    async def main() -> Timed:
        await bounded(args.concurrency, warm, call)
        with Timed() as timed:
            await bounded(args.concurrency, work, call)
        return timed

    timed = asyncio.run(main())
    return {"items": len(work), "seconds": timed.wall, "cpu": timed.cpu}


def worker_raw_client(args: argparse.Namespace) -> dict[str, Any]:
    from dspy.clients.engines.lm15_engine import timeouts_for
    from dspy.lm15 import AsyncLMRouter, RouterConfig, request_from_openai_chat

    warm, work = requests_of(args.warmup, args), requests_of(args.data, args)

    async def main() -> Timed:
        router = AsyncLMRouter(
            RouterConfig(
                api_keys={"openai-chat": os.environ[KEY_ENV]},
                base_urls={"openai-chat": args.api_base},
                timeouts=timeouts_for(120.0),
            )
        )
        route = router.resolve_openai_chat("openai-chat:" + MODEL.split("/", 1)[1])
        client = router.lm(f"{route.provider}:{route.model}")

        async def call(messages: list[dict[str, Any]]) -> None:
            body = {"model": route.model, "messages": messages, "temperature": 0.0, "max_tokens": 4000}
            await client.complete(request_from_openai_chat(body))

        await bounded(args.concurrency, warm, call)
        with Timed() as timed:
            await bounded(args.concurrency, work, call)
        await router.aclose()
        return timed

    timed = asyncio.run(main())
    return {"items": len(work), "seconds": timed.wall, "cpu": timed.cpu}


def worker_dspy_batch(args: argparse.Namespace) -> dict[str, Any]:
    import dspy

    from jurist.tasks import get_task

    task = get_task(TASK)
    program = task.program(task.options())
    lm = dspy.LM(MODEL, api_base=args.api_base, api_key=os.environ[KEY_ENV], temperature=0.0, max_tokens=4000)
    dspy.configure_cache(enable_disk_cache=True, enable_memory_cache=True, disk_cache_dir=args.cache_dir)
    dspy.configure(lm=lm)

    def examples(path: str) -> list[Any]:
        return [dspy.Example(**item.inputs).with_inputs(*item.inputs) for item in task_items(path)]

    warm, work = examples(args.warmup), examples(args.data)
    options = {"num_threads": args.concurrency, "max_errors": len(work) + 1, "disable_progress_bar": True}
    program.batch(warm, **options)
    with Timed() as timed:
        results = program.batch(work, **options)
    return {"items": len(results), "seconds": timed.wall, "cpu": timed.cpu}


def worker_runner(args: argparse.Namespace) -> dict[str, Any]:
    from jurist.runner import run_items
    from jurist.tasks import get_task

    task = get_task(TASK)
    options = task.options()
    config = judge_config(args, engine=args.engine, cache_dir=args.cache_dir)
    judge = task.make_judge(config, options)

    def run(path: str, out: str) -> Any:
        dataset = task.read(path, options)
        return run_items(
            task.items(dataset, options),
            judge,
            out,
            task=TASK,
            dataset=dataset.describe(),
            config=config.model_dump(mode="json"),
            concurrency=config.concurrency,
            progress=False,
        )

    run(args.warmup, args.out + "-warmup")
    with Timed() as timed:
        summary = run(args.data, args.out)
    return {
        "items": summary.judged,
        "seconds": timed.wall,
        "cpu": timed.cpu,
        "calls": summary.usage.calls,
        "cache_hits": summary.usage.cache_hits,
        "failed": summary.failed,
        "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


WORKERS = {
    "raw-litellm": worker_raw_litellm,
    "raw-client": worker_raw_client,
    "dspy-batch": worker_dspy_batch,
    "runner": worker_runner,
}


def spawn(mode: str, **kwargs: object) -> dict[str, Any]:
    command = [sys.executable, __file__, "--worker", mode]
    for key, value in kwargs.items():
        command += [f"--{key.replace('_', '-')}", str(value)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{mode} worker failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def jurist_command() -> list[str]:
    """The ``jurist`` console script of this Python environment (``python -m jurist`` without one)."""
    script = Path(sys.executable).with_name("jurist")
    return [str(script)] if script.exists() else [sys.executable, "-m", "jurist"]


def cli(data: Path, out: Path, config_file: Path, items: int, extra: tuple[str, ...] = ()) -> dict[str, Any]:
    """Run ``jurist judge`` as a user does; wall time and the CPU time of it and its worker processes."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    command = [
        *jurist_command(),
        "judge",
        TASK,
        str(data),
        "--out",
        str(out),
        "--config",
        str(config_file),
        *extra,
    ]
    done = subprocess.run([*command, "--no-progress"], capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"jurist judge failed ({done.returncode}):\n{done.stderr[-3000:]}")
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    if summary.get("failed"):
        raise SystemExit(f"jurist judge recorded {summary['failed']} failed items")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    usage = summary.get("usage", {})
    return {
        "items": items,
        "seconds": seconds,
        "cpu": cpu,
        "calls": usage.get("calls"),
        "cache_hits": usage.get("cache_hits"),
    }


def write_config(path: Path, *, base: str, engine: str, concurrency: int, cache_dir: Path) -> Path:
    import yaml

    settings = {
        "model": MODEL,
        "api_base": base,
        "api_key_env": KEY_ENV,
        "engine": engine,
        "concurrency": concurrency,
        "cache_dir": str(cache_dir),
    }
    path.write_text(yaml.safe_dump(settings), encoding="utf-8")
    return path


def start_server(latency: float, reply_file: Path) -> tuple[subprocess.Popen[str], str]:
    server = subprocess.Popen(
        [
            sys.executable,
            "-W",
            "ignore::RuntimeWarning",
            "-m",
            "jurist.testing.openai_server",
            "--latency",
            str(latency),
            "--reply-file",
            str(reply_file),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    return server, server.stdout.readline().strip()


def compile_jurist(src: Path | None = None) -> None:
    """Byte-compile jurist's modules (those of ``src``, else the imported package), as an
    install does: every timed run then reads bytecode, also where ``PYTHONDONTWRITEBYTECODE``
    keeps Python from writing it on import."""
    import compileall

    if src is None:
        import jurist

        src = Path(jurist.__file__).parent
    compileall.compile_dir(str(src), quiet=1)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_ray(args: argparse.Namespace) -> subprocess.Popen[bytes]:
    """A Ray head node on 127.0.0.1 with ``--workers`` CPUs, in its own process group; sets
    ``args.ray_address``. Its worker processes get this environment (the benchmark's key)."""
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    port = free_port()
    command = [
        str(Path(sys.executable).with_name("ray")),
        "start",
        "--head",
        "--block",
        "--node-ip-address=127.0.0.1",
        f"--port={port}",
        f"--num-cpus={args.workers}",
        "--include-dashboard=false",
    ]
    head = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    args.ray_address = f"127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                time.sleep(2)  # the GCS listens before the raylet has registered
                return head
        time.sleep(0.2)
    os.killpg(head.pid, signal.SIGTERM)
    raise SystemExit("the Ray head node did not start within 60 s")


ROWS = [
    ("raw-litellm", "raw litellm.acompletion loop"),
    ("raw-client", "raw client (lm15, default engine)"),
    ("dspy-batch", "DSPy Module.batch (default engine)"),
    ("runner-auto", "jurist runner in-process (auto)"),
    ("runner-litellm", "jurist runner in-process (litellm)"),
    ("cli-auto", "jurist CLI, 1 process, fresh cache (auto)"),
    ("cached-runner", "cached re-run, runner in-process"),
    ("cached-cli", "cached re-run, jurist CLI"),
    ("resume-cli", "finished run again, jurist CLI"),
    ("one-cli", "one cached item, new directory, CLI"),
    ("imports", "imports alone (python -c)"),
    ("cli-workers", "jurist CLI, N workers, fresh cache"),
    ("cli-ray", "jurist CLI on Ray, fresh cache"),
]


IMPORTS = "import jurist.cli, jurist.runner, jurist.tasks.ragbench, pandas, pyarrow.parquet"

ONE_WARMUPS = 2
"""Runs of the one-item command before the timed one (into new directories, not timed)."""


def imports_floor() -> dict[str, Any]:
    """Wall and CPU time of importing what ``jurist judge`` needs for a run whose every verdict
    and figure is cached (pandas, pyarrow; not DSPy, not matplotlib), and nothing else: the
    floor of the one-item row."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", IMPORTS], check=True)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"items": 1, "seconds": seconds, "cpu": cpu}


def one_round(
    args: argparse.Namespace, root: Path, base: str, data: Path, warmup: Path, one: Path
) -> dict[str, dict]:
    """Every mode once, against the same server, with fresh caches and run directories."""
    root.mkdir(parents=True)
    common: dict[str, object] = {
        "api_base": base,
        "concurrency": args.concurrency,
        "data": data,
        "warmup": warmup,
        "cache_dir": root / "unused-cache",
    }
    found: dict[str, dict] = {}
    if not args.cli_only:
        found["raw-litellm"] = spawn("raw-litellm", **common)
        found["raw-client"] = spawn("raw-client", **common)
        found["dspy-batch"] = spawn("dspy-batch", **{**common, "cache_dir": root / "dspy-cache"})
        for engine in ("auto", "litellm"):
            cache = root / f"cache-{engine}"
            found[f"runner-{engine}"] = spawn(
                "runner", **{**common, "engine": engine, "cache_dir": cache, "out": root / f"run-{engine}"}
            )
        found["cached-runner"] = spawn(
            "runner",
            **{**common, "engine": "auto", "cache_dir": root / "cache-auto", "out": root / "run-cached"},
        )
    config = write_config(
        root / "judge.yaml",
        base=base,
        engine="auto",
        concurrency=args.concurrency,
        cache_dir=root / "cli-cache",
    )
    found["cli-auto"] = cli(data, root / "cli-run", config, args.items, ("--workers", "1"))
    found["cached-cli"] = cli(data, root / "cli-run-cached", config, args.items)
    found["resume-cli"] = cli(data, root / "cli-run-cached", config, args.items)
    # The fixed cost: one item (the data's first, so its verdict is cached) into a new directory,
    # timed as a user re-running the command sees it: after warm-up runs of the same command
    # (the first of which draws its report's figures into the figure cache).
    for warm in range(ONE_WARMUPS):
        cli(one, root / f"cli-run-one-warm-{warm}", config, 1)
    found["one-cli"] = cli(one, root / "cli-run-one", config, 1)
    found["imports"] = imports_floor()
    for mode, extra in (
        ("cli-workers", ("--workers", str(args.workers))),
        ("cli-ray", ("--backend", "ray", "--ray-address", args.ray_address or "")),
    ):
        if args.cli_only or (mode == "cli-ray" and not args.ray_address):
            continue
        scaled = write_config(
            root / f"{mode}.yaml",
            base=base,
            engine="auto",
            concurrency=args.concurrency,
            cache_dir=root / mode,
        )
        found[mode] = cli(data, root / f"{mode}-run", scaled, args.items, extra)
    for mode in ("runner-auto", "runner-litellm", "cli-auto", "cli-workers", "cli-ray"):
        if mode in found and found[mode].get("cache_hits"):
            raise SystemExit(f"{mode} was meant to start with an empty cache: {found[mode]}")
    for mode in ("cached-runner", "cached-cli"):
        if mode in found and found[mode].get("calls"):
            raise SystemExit(f"{mode} was meant to be answered from the cache: {found[mode]}")
    shutil.rmtree(root, ignore_errors=True)
    return found


def median(rounds: list[dict[str, dict]], mode: str, what: str) -> float:
    values = []
    for found in rounds:
        result = found[mode]
        values.append(
            result["items"] / result["seconds"] if what == "rate" else result["cpu"] / result["items"] * 1000
        )
    return statistics.median(values)


def spread(rounds: list[dict[str, dict]], mode: str) -> str:
    rates = [found[mode]["items"] / found[mode]["seconds"] for found in rounds]
    return f"{min(rates):.0f}-{max(rates):.0f}" if len(rates) > 1 else ""


def report(args: argparse.Namespace, rounds: list[dict[str, dict]]) -> None:
    ideal = args.concurrency / args.latency
    print(
        f"{args.items} distinct items, concurrency {args.concurrency}, server latency "
        f"{args.latency * 1000:.0f} ms, ideal {ideal:.0f} items/s, {os.cpu_count()} cores, "
        f"median of {len(rounds)} round(s)"
    )
    print(f"{'mode':40} {'items/s':>9} {'range':>11} {'of ideal':>9} {'CPU ms/item':>12}")
    rows = [
        (mode, label.replace("N workers", f"{args.workers} workers"))
        for mode, label in ROWS
        if mode in rounds[0]
    ]
    for mode, label in rows:
        rate = median(rounds, mode, "rate")
        cpu = median(rounds, mode, "cpu")
        print(f"{label:40} {rate:9.1f} {spread(rounds, mode):>11} {rate / ideal:9.2f} {cpu:12.2f}")
    rate = {mode: median(rounds, mode, "rate") for mode, _ in rows}
    cpu = {mode: median(rounds, mode, "cpu") for mode, _ in rows}
    rate["ideal"] = ideal
    print("ratios (target in brackets):")
    lines = [
        ("runner (auto) / raw litellm", "runner-auto", "raw-litellm", ">= 0.95"),
        ("runner (auto) / raw client", "runner-auto", "raw-client", ">= 0.9"),
        ("runner (auto) / ideal", "runner-auto", "ideal", ""),
        ("runner (litellm) / raw litellm", "runner-litellm", "raw-litellm", ">= 0.9"),
        ("runner (auto) / DSPy Module.batch", "runner-auto", "dspy-batch", ""),
        ("CLI (auto) / raw litellm", "cli-auto", "raw-litellm", ""),
        ("CLI (auto) / ideal", "cli-auto", "ideal", ""),
        (f"CLI {args.workers} workers / CLI 1 process", "cli-workers", "cli-auto", ""),
        ("CLI on Ray / CLI 1 process", "cli-ray", "cli-auto", ""),
    ]
    for label, top, bottom, target in lines:
        if top in rate and bottom in rate:
            value = rate[top] / rate[bottom]
            print(f"  {label:40} {value:6.2f}  {f'[{target}]' if target else ''}")
    if "runner-auto" in cpu and "raw-client" in cpu:
        own = cpu["runner-auto"] - cpu["raw-client"]
        print(f"  {'jurist own CPU per fresh item (ms)':40} {own:6.2f}  [<= 1.5]  (runner auto - raw client)")
    if "cached-runner" in rate:
        print(f"  {'cached re-run in-process (items/s)':40} {rate['cached-runner']:6.0f}  [>= 2000]")
    if "one-cli" in rounds[0]:
        seconds = statistics.median(found["one-cli"]["seconds"] for found in rounds)
        print(f"  {'one cached item, CLI (s)':40} {seconds:6.2f}  [<= 1]")
        print(f"  {'cached re-run, CLI, at the margin':40} {margin(rounds, 'cached-cli'):6.0f}  [>= 2000]")


def figures(args: argparse.Namespace, rounds: list[dict[str, dict]]) -> dict[str, Any]:
    """The medians of every mode, for ``--json`` (read by ``benchmarks/table.py``)."""
    return {
        "items": args.items,
        "concurrency": args.concurrency,
        "latency": args.latency,
        "rounds": len(rounds),
        "ideal": args.concurrency / args.latency,
        "modes": {
            mode: {
                "rate": median(rounds, mode, "rate"),
                "cpu_ms": median(rounds, mode, "cpu"),
                "range": spread(rounds, mode),
                "seconds": statistics.median(found[mode]["seconds"] for found in rounds),
                **({"margin": margin(rounds, mode)} if mode in MARGINAL and "one-cli" in rounds[0] else {}),
            }
            for mode, _ in ROWS
            if mode in rounds[0]
        },
    }


MARGINAL = ("cli-auto", "cached-cli", "resume-cli")
"""Shell rows also given at the margin: their items over their time beyond the one-item run's."""


def margin(rounds: list[dict[str, dict]], mode: str) -> float:
    """Items per second at the margin: ``(items - 1) / (seconds - seconds of one cached item)``,
    each round against its own one-item run (the fixed cost: start-up, imports, report)."""
    rates = []
    for found in rounds:
        extra = found[mode]["seconds"] - found["one-cli"]["seconds"]
        rates.append((found[mode]["items"] - 1) / extra if extra > 0 else float("inf"))
    return statistics.median(rates)


def memory(args: argparse.Namespace, root: Path, base: str) -> dict[int, float]:
    """Peak memory (MB) of the in-process runner at N/2 and 2N items."""
    small, large = args.items // 2, args.items * 2
    peaks = {}
    print("peak memory of the in-process runner (max RSS, default engine):")
    for count in (small, large):
        path = root / f"mem-{count}.jsonl"
        write_items(path, count)
        result = spawn(
            "runner",
            out=root / f"mem-{count}",
            cache_dir=root / f"mem-cache-{count}",
            api_base=base,
            concurrency=args.concurrency,
            engine="auto",
            data=path,
            warmup=root / "warmup.jsonl",
        )
        print(f"  {count:6d} items: {result['max_rss_mb']:.0f} MB")
        peaks[count] = result["max_rss_mb"]
    return peaks


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--repeat", type=int, default=3, help="rounds; every figure is their median")
    parser.add_argument("--memory", action="store_true", help="also measure peak memory at N/2 and 2N items")
    parser.add_argument(
        "--workers", type=int, default=os.cpu_count() or 1, help="processes of the N-workers row"
    )
    parser.add_argument(
        "--ray", action="store_true", help="also judge on a Ray instance started on 127.0.0.1"
    )
    parser.add_argument(
        "--cli-only", action="store_true", help="only the jurist judge rows (fresh, cached, resume)"
    )
    parser.add_argument("--json", type=Path, help="also write the medians to this JSON file")
    parser.add_argument("--ray-address", help=argparse.SUPPRESS)
    parser.add_argument("--worker", choices=sorted(WORKERS))
    parser.add_argument("--engine", default="auto")
    parser.add_argument("--api-base")
    parser.add_argument("--data")
    parser.add_argument("--warmup")
    parser.add_argument("--out")
    parser.add_argument("--cache-dir")
    args = parser.parse_args()
    os.environ.setdefault(KEY_ENV, "benchmark-key")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    if args.worker:
        print(json.dumps(WORKERS[args.worker](args)))
        return

    compile_jurist()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        reply = root / "reply.txt"
        reply.write_text(REPLY, encoding="utf-8")
        data = root / "items.jsonl"
        write_items(data, args.items)
        warmup = root / "warmup.jsonl"
        write_items(warmup, 2 * args.concurrency, prefix="warm-up")
        server, base = start_server(args.latency, reply)
        head = start_ray(args) if args.ray else None
        try:
            one = root / "one.jsonl"
            write_items(one, 1)  # the first item of ``data``
            rounds = [
                one_round(args, root / f"round-{n}", base, data, warmup, one) for n in range(args.repeat)
            ]
            report(args, rounds)
            found = figures(args, rounds)
            if args.memory:
                found["memory_mb"] = memory(args, root, base)
            if args.json:
                args.json.write_text(json.dumps(found, indent=2), encoding="utf-8")
        finally:
            server.terminate()
            server.wait(timeout=10)
            if head is not None:
                os.killpg(head.pid, signal.SIGTERM)
                head.wait(timeout=60)


if __name__ == "__main__":
    main()
