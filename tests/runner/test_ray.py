"""One run judged on a Ray cluster (``--backend ray``) started by the test on 127.0.0.1: the same
results as one process, and nothing lost or asked twice when a Ray worker or the driver is killed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
from collections.abc import Iterator

import psutil
import pytest

import jurist
from scale_support import (
    exports,
    judge_command,
    longer_wins,
    recorded,
    start,
    wait_for,
    without_usage,
    write_pairs,
)
from support import loopback_config, ragbench_answer, ragbench_rows, write_jsonl

pytestmark = pytest.mark.slow

RAY_ENV = {
    # Ray on 127.0.0.1 only, with no token to set up.
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
    "RAY_AUTH_MODE": "disabled",
    # What the cluster's worker processes need: they are started with the environment Ray had.
    "JURIST_TEST_API_KEY": "loopback-test-key",
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
}


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A two-CPU Ray instance on this machine for the module; yields its address."""
    ray = pytest.importorskip("ray", reason="RAY TESTS NOT RUN: pip install '.[test]' installs Ray")
    with pytest.MonkeyPatch.context() as patch:
        for name, value in RAY_ENV.items():
            patch.setenv(name, value)
        ray.init(
            address="local",
            num_cpus=2,
            include_dashboard=False,
            logging_level="warning",
            log_to_driver=False,
            _node_ip_address="127.0.0.1",
        )
        try:
            yield ray.get_runtime_context().gcs_address
        finally:
            ray.shutdown()


def _ray_workers() -> list[psutil.Process]:
    """The Ray worker processes of the test's cluster judging a chunk of a run now."""
    found = []
    for process in psutil.Process().children(recursive=True):
        try:
            if any("judge_chunk" in part for part in process.cmdline()):
                found.append(process)
        except psutil.Error:
            continue  # ended meanwhile
    return found


def test_ray_workers_and_one_process_give_the_same_results(cluster, tmp_path):
    from jurist.testing import OpenAICompatibleServer

    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(300))
    with OpenAICompatibleServer(ragbench_answer) as srv:
        for name, scale in (("one", {}), ("workers", {"workers": 2}), ("ray", {"backend": "ray"})):
            srv.reset_count()
            config = loopback_config(srv.base_url, tmp_path / f"cache-{name}").model_copy(
                update={"concurrency": 8}
            )
            jurist.judge("ragbench", data, config, out=tmp_path / name, progress=False, **scale)
            assert srv.requests == 300, name
    one = exports(tmp_path / "one")
    assert exports(tmp_path / "workers") == one
    assert exports(tmp_path / "ray") == one


def test_a_task_with_its_own_judging_code_judges_on_ray_as_in_one_process(cluster, tmp_path, capfd):
    from jurist.testing import OpenAICompatibleServer

    # pairwise judges through its own code (both orders of each pair), with its own recipe.
    pairs = write_pairs(tmp_path / "pairs.jsonl", 10)
    requests = {}
    with OpenAICompatibleServer(longer_wins) as srv:
        for name, backend in (("one", "local"), ("ray", "ray")):
            srv.reset_count()
            config = loopback_config(srv.base_url, tmp_path / f"cache-{name}")
            jurist.judge("pairwise", pairs, config, out=tmp_path / name, progress=False, backend=backend)
            requests[name] = srv.requests
    assert requests["ray"] == requests["one"] >= 20
    assert exports(tmp_path / "ray") == exports(tmp_path / "one")
    assert "judged in this one" not in capfd.readouterr().err


def test_a_killed_ray_worker_is_retried_and_nothing_finished_is_asked_again(cluster, tmp_path):
    from jurist.testing import OpenAICompatibleServer

    count = 160
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(count))
    with OpenAICompatibleServer(ragbench_answer, latency=0.05) as srv:
        clean = loopback_config(srv.base_url, tmp_path / "cache-clean")
        jurist.judge("ragbench", data, clean, out=tmp_path / "clean", progress=False)
        srv.reset_count()
        killed: list[int] = []

        def kill_one() -> None:
            wait_for(lambda: recorded(tmp_path / "run") >= 20, what="20 recorded items")
            victims = _ray_workers()
            if victims:
                victims[0].send_signal(signal.SIGKILL)
                killed.append(victims[0].pid)

        killer = threading.Thread(target=kill_one)
        killer.start()
        config = loopback_config(srv.base_url, tmp_path / "cache")
        jurist.judge("ragbench", data, config, out=tmp_path / "run", progress=False, backend="ray")
        killer.join()
        assert killed, "no Ray worker was judging when the test looked"
        # Ray ran the lost chunk again: its items that had finished came from the cache, the
        # rest (at most one chunk: concurrency 4 over 2 CPUs) were asked once more.
        assert count <= srv.requests <= count + 2
        srv.reset_count()
        jurist.judge("ragbench", data, config, out=tmp_path / "run", progress=False, backend="ray")
        assert srv.requests == 0
    assert without_usage(exports(tmp_path / "run")) == without_usage(exports(tmp_path / "clean"))


def test_a_killed_ray_driver_resumes_with_nothing_finished_asked_again(cluster, tmp_path):
    from jurist.testing import OpenAICompatibleServer

    count = 160
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(count))
    with OpenAICompatibleServer(ragbench_answer, latency=0.05) as srv:

        def command(out: str, *extra: str) -> list[str]:
            options = ["--concurrency", "4", *extra]
            return judge_command(
                data, tmp_path / out, base_url=srv.base_url, cache=tmp_path / f"cache-{out}", extra=options
            )

        clean = loopback_config(srv.base_url, tmp_path / "cache-clean").model_copy(update={"concurrency": 4})
        jurist.judge("ragbench", data, clean, out=tmp_path / "clean", progress=False)
        out = tmp_path / "run"
        on_ray = command("run", "--backend", "ray", "--ray-address", cluster)
        driver = start(on_ray)
        wait_for(
            lambda: recorded(out) >= 20 or driver.poll() is not None, timeout=90, what="20 recorded items"
        )
        assert driver.poll() is None, driver.stderr.read().decode() if driver.stderr else ""
        driver.send_signal(signal.SIGKILL)
        driver.wait(timeout=10)
        before = recorded(out)
        assert 20 <= before < count
        srv.reset_count()
        resumed = subprocess.run(on_ray, env=os.environ.copy(), capture_output=True, timeout=120)
        assert resumed.returncode == 0, resumed.stderr.decode()
        # Only items not recorded were asked again (some of them from the cache the killed run wrote).
        assert srv.requests <= count - before
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "finished" and manifest["counts"] == {"ok": count, "failed": 0}
    assert without_usage(exports(out)) == without_usage(exports(tmp_path / "clean"))
