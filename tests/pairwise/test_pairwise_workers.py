"""``jurist judge pairwise --workers 2``: both orders of every pair judged in other processes,
with the same exports as one process."""

from __future__ import annotations

import jurist
from jurist.testing import OpenAICompatibleServer
from scale_support import exports, longer_wins, write_pairs
from support import loopback_config


def test_two_processes_judge_pairs_as_one_does(tmp_path, capfd):
    pairs = write_pairs(tmp_path / "pairs.jsonl", 10)
    requests = {}
    with OpenAICompatibleServer(longer_wins) as srv:
        for name, workers in (("one", 1), ("two", 2)):
            srv.reset_count()
            config = loopback_config(srv.base_url, tmp_path / f"cache-{name}")
            run = jurist.judge(
                "pairwise", pairs, config, out=tmp_path / name, progress=False, workers=workers
            )
            requests[name] = srv.requests
    assert requests["two"] == requests["one"] >= 20  # each pair in both orders, failures retried
    assert run.summary["failed"] == 4  # the two UNSURE pairs, both orders: recorded, not scored
    assert exports(tmp_path / "two") == exports(tmp_path / "one")
    for table in ("judged_pairs.csv", "agreement.csv"):
        assert (tmp_path / "two" / table).read_text() == (tmp_path / "one" / table).read_text()
    # The judge left this process: no line says it could not.
    assert "judged in this one" not in capfd.readouterr().err
