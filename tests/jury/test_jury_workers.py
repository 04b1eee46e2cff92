"""A jury's jurors judged by several processes (``--workers 2``): each juror's run leaves the
driver, and a repeated juror answers as its own repeat there too."""

from __future__ import annotations

from jurist import verbs
from jurist.testing import OpenAICompatibleServer
from scale_support import exports, longer_wins, write_pairs
from support import loopback_config


def test_repeats_judged_by_other_processes_are_asked_of_the_provider_as_in_one(tmp_path, capfd):
    data = write_pairs(tmp_path / "pairs.jsonl", 10)
    with OpenAICompatibleServer(longer_wins) as server:
        config = loopback_config(server.base_url, tmp_path / "cache-plain")
        verbs.judge("pairwise", data, config, out=tmp_path / "plain", progress=False)
        once = server.requests
        for name, workers in (("one", 1), ("two", 2)):
            server.reset_count()
            config = loopback_config(server.base_url, tmp_path / f"cache-{name}")
            verbs.judge(
                "pairwise",
                data,
                config,
                out=tmp_path / name,
                progress=False,
                repeats=2,
                workers=workers,
            )
            # Repeat 2 is salted into its own cache entries in the worker processes too: it
            # is asked of the provider, not answered with repeat 1's cached answers.
            assert server.requests == 2 * once, name
    for repeat in ("repeats/1", "repeats/2"):
        assert exports(tmp_path / "two" / repeat) == exports(tmp_path / "one" / repeat)
    one, two = exports(tmp_path / "one"), exports(tmp_path / "two")
    for found in (one, two):
        for member in found["summary"]["repeats"]["members"]:
            member.pop("run_dir")  # where each run is: the one thing that differs
    assert two == one
    assert "judged in this one" not in capfd.readouterr().err
