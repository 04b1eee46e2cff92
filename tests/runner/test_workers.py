"""One run judged by several local processes (``--workers N``): the same results as one process,
and nothing lost or asked twice when a worker or the driver is killed."""

from __future__ import annotations

import functools
import json
import os
import signal
import subprocess

import psutil
import pytest

import jurist
from jurist.errors import ConfigError, FatalProviderError, WorkerLostError
from jurist.runner import RESULTS_DB, Item, JudgeRecipe, ResultStore, Scale, run_items
from jurist.runner.scale import AUTO_ITEMS_PER_WORKER, parse_workers, worker_count
from jurist.runner.workers import START_TRIES
from jurist.tasks import get_task
from jurist.testing import Fault, OpenAICompatibleServer
from scale_support import DiesWhileStarting, exports, judge_command, recorded, start, wait_for, without_usage
from support import loopback_config, ragbench_answer, ragbench_rows, run_cli, write_jsonl


def _workers_of(driver: subprocess.Popen[bytes]) -> list[psutil.Process]:
    """The judging worker processes a ``jurist`` process started (not multiprocessing's helper)."""
    children = psutil.Process(driver.pid).children(recursive=True)
    return [child for child in children if "resource_tracker" not in " ".join(child.cmdline())]


@pytest.mark.slow
@pytest.mark.parametrize("victim", ["worker", "driver"])
def test_a_killed_process_loses_nothing_and_repeats_nothing_finished(victim, tmp_path):
    count = 120
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(count))
    with OpenAICompatibleServer(ragbench_answer, latency=0.05) as srv:

        def command(out: str, workers: str) -> list[str]:
            extra = ["--workers", workers, "--concurrency", "4"]
            return judge_command(
                data, tmp_path / out, base_url=srv.base_url, cache=tmp_path / f"cache-{out}", extra=extra
            )

        clean = loopback_config(srv.base_url, tmp_path / "cache-clean").model_copy(update={"concurrency": 4})
        jurist.judge("ragbench", data, clean, out=tmp_path / "clean", progress=False)
        srv.reset_count()
        out = tmp_path / "run"
        driver = start(command("run", "2"))
        wait_for(lambda: recorded(out) >= 20 or driver.poll() is not None, what="20 recorded items")
        assert driver.poll() is None, driver.stderr.read().decode() if driver.stderr else ""
        workers = _workers_of(driver)
        assert len(workers) == 2
        if victim == "worker":
            workers[0].send_signal(signal.SIGKILL)
            _, stderr = driver.communicate(timeout=120)
            # The worker was replaced and its items judged by the others: the run finished.
            assert driver.returncode == 0, stderr.decode()
            # An item held by the killed worker may have been asked once more, no other.
            assert count <= srv.requests <= count + 4
        else:
            driver.send_signal(signal.SIGKILL)
            driver.wait(timeout=10)
            # The workers end when their driver's pipe closes: no orphan judges on.
            _, alive = psutil.wait_procs(workers, timeout=20)
            assert not alive
            before = recorded(out)
            assert 20 <= before < count
            srv.reset_count()
            resumed = subprocess.run(
                command("run", "2"), env=os.environ.copy(), capture_output=True, timeout=120
            )
            assert resumed.returncode == 0, resumed.stderr.decode()
            # Only items not recorded were asked again (those finished after the last commit
            # come from the response cache the workers wrote).
            assert srv.requests <= count - before
        srv.reset_count()
        again = subprocess.run(command("run", "2"), env=os.environ.copy(), capture_output=True, timeout=120)
        assert again.returncode == 0 and srv.requests == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "finished" and manifest["counts"] == {"ok": count, "failed": 0}
    # Usage says how each answer was got (a resumed run reads some from the cache): the rest is equal.
    assert without_usage(exports(out)) == without_usage(exports(tmp_path / "clean"))


def test_a_fatal_provider_error_in_a_worker_stops_the_run(tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(40))
    with OpenAICompatibleServer(ragbench_answer) as srv:
        srv.inject(*[Fault(status=401)] * 100)
        config = loopback_config(srv.base_url, tmp_path / "cache")
        with pytest.raises(FatalProviderError):
            jurist.judge("ragbench", data, config, out=tmp_path / "run", progress=False, workers=2)
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["status"] == "stopped"


def _run_with(recipe: JudgeRecipe | None, judge, tmp_path, scale: Scale) -> None:
    items = [Item(id=f"i{n}", inputs={}) for n in range(4)]
    run_items(
        items,
        judge,
        tmp_path / "run",
        task="ragbench",
        dataset={"sha256": "x", "items": 4},
        config={},
        total=4,
        progress=False,
        recipe=recipe,
        scale=scale,
    )


def test_a_judge_rebuilt_with_another_fingerprint_is_refused(tmp_path, llm_config):
    task = get_task("ragbench")
    options = task.options()
    judge = task.make_judge(llm_config, options)
    # The recipe builds a judge that answers differently (another temperature).
    other = JudgeRecipe(
        functools.partial(task.make_judge, options=options),
        llm_config.model_copy(update={"temperature": 0.5}),
    )
    with pytest.raises(ConfigError, match="fingerprint"):
        _run_with(other, judge, tmp_path, Scale(workers=2))
    with ResultStore(tmp_path / "run" / RESULTS_DB) as store:
        assert store.counts() == {}


def test_workers_without_a_recipe_are_refused_when_asked_for(tmp_path, llm_config):
    task = get_task("ragbench")
    judge = task.make_judge(llm_config, task.options())
    with pytest.raises(ConfigError, match="no recipe"):
        _run_with(None, judge, tmp_path, Scale(workers=2))
    assert not (tmp_path / "run").exists()


def test_how_many_workers_judge():
    cores = os.cpu_count() or 1
    # auto: one process, unless each of several gets enough items and enough in flight.
    assert worker_count("auto", 10, concurrency=256) == 1
    assert worker_count("auto", None, concurrency=256) == 1
    assert worker_count("auto", AUTO_ITEMS_PER_WORKER * 64, concurrency=8) == 1
    assert worker_count("auto", AUTO_ITEMS_PER_WORKER * 64, concurrency=64) == min(cores, 2)
    assert worker_count("auto", AUTO_ITEMS_PER_WORKER * 64, concurrency=1024) == min(cores, 32)
    assert worker_count(4, 3, concurrency=32) == 3  # never more than items to judge
    assert worker_count(4, 100, concurrency=2) == 2  # each process judges one item at least
    assert worker_count(4, 100, concurrency=8) == 4
    assert parse_workers("auto") == "auto" and parse_workers("3") == 3
    with pytest.raises(ConfigError, match="workers"):
        parse_workers("0")


def test_command_line_refuses_bad_scale_options(tmp_path):
    assert (
        run_cli(["judge", "ragbench", "sample:ragbench", "--out", str(tmp_path / "a"), "--workers", "many"])
        == 2
    )
    assert (
        run_cli(["judge", "ragbench", "sample:ragbench", "--out", str(tmp_path / "b"), "--backend", "spark"])
        == 2
    )
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_each_process_gets_its_share_of_the_rate_limits(llm_config):
    task = get_task("ragbench")
    limited = llm_config.model_copy(update={"rpm": 100, "tpm": 9000})
    recipe = JudgeRecipe(functools.partial(task.make_judge, options=task.options()), limited)
    assert (recipe.share(4).rpm, recipe.share(4).tpm) == (25, 2250)
    assert recipe.share(1) is limited
    assert recipe.share(4).fingerprint() == limited.fingerprint()


def _dying_recipe(llm_config, marks, deaths: int) -> tuple[JudgeRecipe, object]:
    task = get_task("ragbench")
    make = functools.partial(task.make_judge, options=task.options())
    return JudgeRecipe(DiesWhileStarting(make, marks, deaths), llm_config), make(llm_config)


def _ragbench_items(tmp_path, count: int) -> list[Item]:
    from jurist.datasets.ragbench import load_ragbench
    from jurist.tasks.ragbench import scoring

    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(count))
    return [Item(id=row.id, inputs=scoring.ragbench_inputs(row)) for row in load_ragbench(data)]


def test_a_worker_killed_while_starting_is_replaced(llm_config, tmp_path):
    # The first worker process that builds its judge is killed (SIGKILL) before it is ready,
    # as a loaded machine's OOM killer or a test's kill may do: it is replaced, the run finishes.
    marks = tmp_path / "marks"
    marks.mkdir()
    recipe, judge = _dying_recipe(llm_config, marks, deaths=1)
    items = _ragbench_items(tmp_path, 8)
    summary = run_items(
        items,
        judge,
        tmp_path / "run",
        task="ragbench",
        dataset={"sha256": "x", "items": 8},
        config={},
        total=8,
        concurrency=4,
        progress=False,
        recipe=recipe,
        scale=Scale(workers=2),
    )
    assert sorted(path.name for path in marks.iterdir()) == ["death-1"]  # one worker did die
    assert summary.ok == 8 and summary.failed == 0
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["status"] == "finished" and manifest["counts"] == {"ok": 8, "failed": 0}


def test_workers_that_keep_dying_while_starting_stop_the_run(llm_config, tmp_path):
    # Restarts are bounded: a judge whose process dies every time it starts stops the run.
    marks = tmp_path / "marks"
    marks.mkdir()
    recipe, judge = _dying_recipe(llm_config, marks, deaths=50)
    with pytest.raises(WorkerLostError, match=f"died {START_TRIES} times before they could judge"):
        run_items(
            _ragbench_items(tmp_path, 8),
            judge,
            tmp_path / "run",
            task="ragbench",
            dataset={"sha256": "x", "items": 8},
            config={},
            total=8,
            concurrency=4,
            progress=False,
            recipe=recipe,
            scale=Scale(workers=2),
        )
    # Each start that died was one of the bounded tries (a second worker may have been dying
    # at the same moment as the last one counted).
    assert START_TRIES <= len(list(marks.iterdir())) <= START_TRIES + 1
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["status"] == "stopped" and manifest["counts"] == {"ok": 0, "failed": 0}
