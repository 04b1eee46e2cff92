"""``jurist calibrate --dry-run`` (``jurist.estimate_calibration``): one estimate per single judge
(each judge, each juror) and gold file, with nothing called and nothing written; its calls are
the calls the calibration then makes."""

from __future__ import annotations

from pathlib import Path

import yaml

from jurist.testing import OpenAICompatibleServer
from jurist.verbs import calibrate, estimate_calibration
from support import CLAIMS_TASK, loopback_config, run_cli, true_verdict, write_jsonl

PRICED = "openai/gpt-4o-mini"


def test_calibrate_dry_run_estimates_every_judge_and_gold_file_and_calls_nothing(tmp_path, capsys):
    task = tmp_path / "claims.yaml"
    task.write_text(CLAIMS_TASK, encoding="utf-8")
    claims = [{"id": f"c{i}", "claim": f"Claim {i}.", "gold": i % 2 == 0} for i in range(14)]
    gold = [
        write_jsonl(tmp_path / "first.jsonl", claims[:8]),
        write_jsonl(tmp_path / "second.jsonl", claims[8:]),
    ]
    with OpenAICompatibleServer(true_verdict) as server:
        base = loopback_config(server.base_url, tmp_path / "cache", model=PRICED)
        files: dict[str, Path] = {}
        for name, temperature in (("a", 0.0), ("b", 0.5)):
            files[name] = tmp_path / f"{name}.yaml"
            config = base.model_copy(update={"temperature": temperature}).model_dump(mode="json")
            files[name].write_text(yaml.safe_dump(config), encoding="utf-8")
        jurors = [{"name": n, **yaml.safe_load(files[n].read_text(encoding="utf-8"))} for n in ("a", "b")]
        files["jury"] = tmp_path / "jury.yaml"
        files["jury"].write_text(yaml.safe_dump({"jury": {"jurors": jurors}}), encoding="utf-8")
        configs = [files["a"], files["jury"]]
        out = tmp_path / "calibration"

        args = ["calibrate", str(task), "--gold", str(gold[0]), "--gold", str(gold[1]), "--out", str(out)]
        assert run_cli([*args, "-c", str(files["a"]), "-c", str(files["jury"]), "--dry-run"]) == 0
        printed = capsys.readouterr().out
        assert server.requests == 0 and not out.exists() and not (tmp_path / "cache").exists()
        assert "nothing was called or written" in printed and "total" in printed

        plan = estimate_calibration(task, gold, configs, out=out)
        table = plan.table
        assert table[["dataset", "judge"]].values.tolist() == [
            [dataset, judge] for dataset in ("first", "second") for judge in ("a", "jury/a", "jury/b")
        ]
        assert table["to_judge"].tolist() == [8, 8, 8, 6, 6, 6]
        assert plan.cost is not None and plan.cost > 0
        assert server.requests == 0

        calibrate(task, gold, configs, out=out)
        # Juror a and judge a share a config: the cache answers the second asking.
        assert server.requests == 14 * 2
        again = estimate_calibration(task, gold, configs, out=out)
        assert again.table["to_judge"].sum() == 0 and again.cost == 0
    assert int(table["calls"].sum()) == 14 * 3  # a dry run counts each judge's calls on its own
