"""The one seam to DSPy's private parts (jurist.judges.dspy_seam): the private names it uses are
pinned, it is the only module that uses them, and a DSPy it was not written for is judged
through DSPy's public call with the same verdicts, usage, cache and retries."""

from __future__ import annotations

import ast
import asyncio
import contextlib
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dspy
import pytest
import yaml

import jurist
from jurist.judges import dspy_seam
from jurist.judges.lm import build_lm, metering
from jurist.runner import call_blocking
from jurist.runner.store import ResultStore
from jurist.testing import Fault, OpenAICompatibleServer
from support import loopback_config, ragbench_answer, ragbench_rows, run_cli, write_jsonl

SRC = Path(jurist.__file__).parent


@pytest.fixture(autouse=True)
def _decide_afresh() -> Iterator[None]:
    """Each test decides the path anew, and leaves the next test to decide again."""
    dspy_seam.recheck()
    yield
    dspy_seam.recheck()


@contextlib.contextmanager
def _public_path(version: str = "3.5.0") -> Iterator[None]:
    """DSPy's public call path, as jurist takes it when it sees DSPy ``version``."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(dspy, "__version__", version)
        dspy_seam.recheck()
        try:
            yield
        finally:
            dspy_seam.recheck()


# -- the private names, pinned ---------------------------------------------------------------


@pytest.mark.parametrize("name", dspy_seam.PRIVATE_NAMES, ids=str)
def test_each_private_name_the_fast_path_uses_is_in_the_installed_dspy_with_its_call_shape(name):
    problem = dspy_seam.name_problem(name)
    assert problem is None, f"the fast path needs {name}: {problem}"


def test_the_installed_dspy_takes_the_fast_path_when_it_is_the_expected_release():
    installed = dspy_seam.installed_version()
    reason = dspy_seam.public_reason()
    if installed.startswith(dspy_seam.WRITTEN_FOR + "."):
        assert reason is None and dspy_seam.fast_path()
    else:
        assert reason is not None and installed in reason and f"{dspy_seam.WRITTEN_FOR}.x" in reason


def test_a_reshaped_private_function_is_named_and_sends_calls_the_public_way(monkeypatch, caplog):
    def canonical(request, compat=None):  # the call shape DSPy might move to
        return request

    monkeypatch.setattr(dspy_seam.dspy_execution, "_canonical", canonical)
    name = next(name for name in dspy_seam.PRIVATE_NAMES if name.name == "_canonical")
    problem = dspy_seam.name_problem(name)
    assert problem is not None and problem.startswith("dspy.clients.execution._canonical ")
    assert "(call, *, compat)" in problem and "call" in problem.rsplit("differs at", 1)[1]

    with caplog.at_level(logging.WARNING, logger="jurist.judges.dspy_seam"):
        assert not dspy_seam.fast_path()
        assert not dspy_seam.fast_path()
    [record] = caplog.records
    line = record.getMessage()
    installed = dspy_seam.installed_version()
    assert "\n" not in line and f"DSPy {installed}" in line and "3.4.x expected" in line
    assert "_canonical" in line


def test_a_missing_private_name_is_named():
    absent = dspy_seam.PrivateName("dspy.clients.execution", "_no_such_function", dspy_seam.Shape(("lm",)))
    problem = dspy_seam.name_problem(absent)
    assert problem is not None and problem.startswith("dspy.clients.execution._no_such_function is missing")


def _private_uses(path: Path) -> list[str]:
    """Where ``path`` imports a private DSPy name (a ``dspy.clients`` submodule, DSPy's own
    ``dspy.dsp`` or ``dspy._vendor`` parts, a name starting with ``_``) or reads a private
    attribute of a ``dspy.LM``."""
    lm_attributes = {name.name for name in dspy_seam.PRIVATE_NAMES if name.owner == dspy_seam.LM_INSTANCE}
    text = path.read_text(encoding="utf-8")
    if "dspy" not in text and not any(name in text for name in lm_attributes):
        return []
    found = []
    for node in ast.walk(ast.parse(text)):
        modules: list[tuple[str, list[str]]] = []
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "dspy":
            modules.append((node.module, [alias.name for alias in node.names]))
        elif isinstance(node, ast.Import):
            modules += [(alias.name, []) for alias in node.names if alias.name.split(".")[0] == "dspy"]
        for module, names in modules:
            parts = module.split(".")
            private = (
                module.startswith(("dspy.clients.", "dspy.dsp", "dspy._vendor"))
                or any(part.startswith("_") for part in parts)
                or any(name.startswith("_") for name in names)
            )
            if private:
                found.append(f"{path.relative_to(SRC)}:{node.lineno}: {module} {names}")
        if isinstance(node, ast.Attribute) and node.attr in lm_attributes:
            found.append(f"{path.relative_to(SRC)}:{node.lineno}: .{node.attr}")
    return found


def test_no_module_but_the_seam_uses_a_private_dspy_name():
    seam = SRC / "judges" / "dspy_seam.py"
    found = [use for path in sorted(SRC.rglob("*.py")) if path != seam for use in _private_uses(path)]
    assert not found, found
    assert _private_uses(seam)  # the check sees them where they are


# -- DSPy's public call path -----------------------------------------------------------------


def _flaky_answer() -> Any:
    """RAGBench answers, the first one not readable (the judge asks again)."""
    answered = 0

    def answer(body: dict[str, Any]) -> str:
        nonlocal answered
        answered += 1
        return "I cannot say." if answered == 1 else ragbench_answer(body)

    return answer


def _judge(server: OpenAICompatibleServer, cache: Path, out: Path, data: Path) -> tuple[Any, dict[str, Any]]:
    """One run of the RAGBench judge, one item at a time (so faults meet the same item): the
    item table without timings, and each item's recorded LM calls."""
    config = loopback_config(server.base_url, cache).model_copy(update={"concurrency": 1})
    table = jurist.judge("ragbench", data, config, out=out, progress=False)
    with ResultStore(out / "results.sqlite", read_only=True) as store:
        recorded = {}
        for item_id in store.item_ids():
            detail = store.item_detail(item_id)
            assert detail is not None and detail.calls is not None
            recorded[item_id] = [
                (
                    call.attempt,
                    call.cache_hit,
                    call.replies,
                    call.prompt_tokens,
                    call.completion_tokens,
                    call.cost,
                    [(message.role, message.content) for message in call.messages],
                    (call.error or "").split(":")[0],
                )
                for call in detail.calls
            ]
    return table.drop(columns=["latency_s"]).sort_values("id").reset_index(drop=True), recorded


def test_a_run_through_dspys_public_call_gives_what_the_fast_path_gives(tmp_path, caplog):
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(2))
    runs = {}
    for path in ("fast", "public"):
        with contextlib.ExitStack() as stack:
            if path == "public":
                stack.enter_context(_public_path())
                stack.enter_context(caplog.at_level(logging.WARNING, logger="jurist.judges.dspy_seam"))
            server = stack.enter_context(OpenAICompatibleServer(_flaky_answer()))
            server.inject(Fault.server_error())  # the first request fails, and is asked again
            first = _judge(server, tmp_path / path / "cache", tmp_path / path / "run", data)
            assert dspy_seam.fast_path() == (path == "fast")
            assert server.statuses[500] == 1
            again = _judge(server, tmp_path / path / "cache", tmp_path / path / "again", data)
            runs[path] = (first, again, dict(server.statuses))

    (fast, fast_again, fast_statuses), (public, public_again, public_statuses) = runs["fast"], runs["public"]
    assert public_statuses == fast_statuses
    for ours, theirs in ((public, fast), (public_again, fast_again)):
        assert ours[0].equals(theirs[0]), (ours[0], theirs[0])
        assert ours[1] == theirs[1]
    table, calls = public
    assert table["status"].tolist() == ["ok"] * 2
    sent = sum(public_statuses.values())
    assert table["calls"].sum() + public_again[0]["calls"].sum() == sent
    assert table["attempts"].tolist() == [2, 1]
    assert table["prompt_tokens"].sum() > 0 and table["completion_tokens"].sum() > 0
    # item-0: the 500, the unreadable answer and DSPy's JSON re-ask (attempt 1), then attempt 2.
    assert [(call[0], call[7]) for call in calls["item-0"]] == [
        (1, "LMServerError"),
        (1, ""),
        (1, ""),
        (2, ""),
    ]
    # The re-run into a new directory: every verdict is read back from the finished-verdict
    # cache (judges/verdicts.py), the item whose first answer was unreadable included.
    assert public_again[0]["cache_hits"].tolist() == [1, 1] and public_again[0]["calls"].tolist() == [0, 0]

    # The warning: once, one line, the installed and the expected version.
    [record] = caplog.records
    assert "\n" not in record.getMessage()
    assert "DSPy 3.5.0 is installed" in record.getMessage() and "DSPy 3.4.x" in record.getMessage()


def _ragbench_judge(config: Any, count: int) -> tuple[Any, list[dict[str, Any]]]:
    task = jurist.get_task("ragbench")
    options = task.options()
    rows = write_jsonl(Path(config.cache_dir).parent / "rows.jsonl", ragbench_rows(count))
    items = task.items(task.read(rows, options), options)
    return task.make_judge(config, options), [item.inputs for item in items]


def test_the_public_path_and_the_fast_path_read_each_others_cache_entries(server, llm_config):
    judge, items = _ragbench_judge(llm_config, 2)
    with _public_path():
        written = call_blocking(asyncio.run, judge.judge(items[0]))
        assert written.usage.calls == 1 and server.requests == 1
    read = call_blocking(asyncio.run, judge.judge(items[0]))
    assert read.usage.cache_hits == 1 and read.output == written.output and server.requests == 1

    call_blocking(asyncio.run, judge.judge(items[1]))
    assert server.requests == 2
    with _public_path():
        read = call_blocking(asyncio.run, judge.judge(items[1]))
    assert read.usage.cache_hits == 1 and read.usage.calls == 0 and server.requests == 2


def test_the_public_path_meters_a_call_where_dspys_history_is_off(server, llm_config):
    lm = build_lm(llm_config.model_copy(update={"cache": False}))
    with _public_path(), metering() as meter, dspy.context(disable_history=True):
        outputs = call_blocking(asyncio.run, lm.acall(messages=[{"role": "user", "content": "hello"}]))
    assert outputs and server.requests == 1
    assert meter.calls == 1 and meter.prompt_tokens > 0 and meter.call_details[0].replies == [outputs[0]]


def test_a_dry_run_on_the_public_path_says_it_did_not_read_the_cache(server, tmp_path, monkeypatch, capsys):
    config = loopback_config(server.base_url, tmp_path / "cache", model="openai/gpt-4o-mini")
    config_file = tmp_path / "judge.yaml"
    config_file.write_text(yaml.safe_dump(config.model_dump(mode="json")), encoding="utf-8")
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(2))
    judge, items = _ragbench_judge(config, 2)
    for inputs in items:  # both answers cached
        call_blocking(asyncio.run, judge.judge(inputs))
    args = ["judge", "ragbench", str(data), "--out", str(tmp_path / "run"), "--config", str(config_file)]

    monkeypatch.setenv(dspy_seam.FAST_PATH_VARIABLE, "0")
    dspy_seam.recheck()
    assert run_cli([*args, "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert "the response cache was not read (DSPy's public call path): every call counts as sent" in printed
    assert "no price for model 'openai/gpt-4o-mini': the price table is read only on jurist's fast" in printed
    plan = jurist.estimate("ragbench", data, config, out=tmp_path / "run")
    row = plan.table.iloc[0]
    assert (row["cached"], row["calls"], row["cost"]) == (0, 2, None)
    assert server.requests == 2

    # A cost limit cannot be kept without prices: refused, saying why.
    assert run_cli([*args, "--max-cost", "1"]) == 2
    assert "the price table is read only on jurist's fast call path" in capsys.readouterr().err

    monkeypatch.delenv(dspy_seam.FAST_PATH_VARIABLE)
    dspy_seam.recheck()
    row = jurist.estimate("ragbench", data, config, out=tmp_path / "run").table.iloc[0]
    assert (row["cached"], row["calls"]) == (2, 0) and row["cost"] is not None


PUBLIC_NAMES = (
    dspy_seam.PrivateName(
        "dspy", "LM.acall", dspy_seam.Shape(("self", "prompt"), ("messages",), var_keywords=True)
    ),
    dspy_seam.PrivateName("dspy", "LM.update_history", dspy_seam.Shape(("self", "entry"))),
    dspy_seam.PrivateName(
        "dspy.clients", "Cache.get", dspy_seam.Shape(("self", "request", "ignored_args_for_cache_key"))
    ),
    dspy_seam.PrivateName(
        "dspy.clients",
        "Cache.put",
        dspy_seam.Shape(("self", "request", "value", "ignored_args_for_cache_key", "enable_memory_cache")),
    ),
    dspy_seam.PrivateName(
        "dspy.clients", "Cache.cache_key", dspy_seam.Shape(("self", "request", "ignored_args_for_cache_key"))
    ),
)
"""The public DSPy names jurist's LM and cache override or call on either path."""


@pytest.mark.parametrize("name", PUBLIC_NAMES, ids=str)
def test_each_public_name_both_paths_rely_on_keeps_its_call_shape(name):
    problem = dspy_seam.name_problem(name)
    assert problem is None, f"jurist's LM and cache rely on {name}: {problem}"


@pytest.mark.parametrize(
    "values",
    [[], ["one"], ["a", "b"], ["line\nbreak", "«quoted»", "plain"], ["tail\n"]],
    ids=["empty", "one", "two", "breaks-and-guillemets", "trailing-break"],
)
def test_a_list_for_a_text_field_is_written_as_dspy_writes_it(values):
    from dspy.adapters.utils import _format_input_list_field_value

    from jurist.judges.adapters import _numbered_list

    assert _numbered_list(values) == _format_input_list_field_value(values)


_PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


@pytest.mark.parametrize(("proxy", "looked_up"), [(None, 0), ("http://127.0.0.1:9", 2)])
def test_a_native_client_looks_the_proxy_up_per_request_only_when_the_environment_names_one(
    server, llm_config, monkeypatch, proxy, looked_up
):
    from dspy._vendor.lm15.transports import _async

    for name in _PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    if proxy is not None:  # a proxy the loopback server is exempt from: lm15 checks per request
        monkeypatch.setenv("HTTP_PROXY", proxy)
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    lookups = []
    original = _async.proxy_route_for

    def counted(parsed, *, proxy, trust_env):
        route = original(parsed, proxy=proxy, trust_env=trust_env)
        if trust_env:
            lookups.append(route)
        return route

    monkeypatch.setattr(_async, "proxy_route_for", counted)
    lm = build_lm(llm_config.model_copy(update={"cache": False}))

    async def twice() -> list[Any]:
        return [await lm.acall(messages=[{"role": "user", "content": f"hello {n}"}]) for n in range(2)]

    assert all(call_blocking(asyncio.run, twice()))
    assert server.requests == 2
    assert lookups == [None] * looked_up
