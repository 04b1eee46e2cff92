"""``jurist judge gates --workers 2``: the claim judge in other processes, with the same
report and verdicts as one process."""

from __future__ import annotations

import json

import jurist
from jurist.testing import OpenAICompatibleServer
from scale_support import recorded_results
from support import loopback_config, prompt_sections

GOLD = [
    {
        "qid": f"q{n}",
        "q": f"What is X{n}?",
        "answerable": True,
        "gold_ids": [f"d{n}"],
        "gold_claim": f"X{n} is blue.",
    }
    for n in range(4)
]


def states_blue(body: dict) -> str:
    """The claim judge: an answer states the claim when it says blue; "no idea" cannot be parsed."""
    answer = prompt_sections(body).get("answer", "")
    if "Marlowe" in answer:
        return "no idea"
    verdict = "True" if "blue" in answer else "False"
    return f"[[ ## states_claim ## ]]\n{verdict}\n\n[[ ## reason ## ]]\nchecked\n\n[[ ## completed ## ]]"


def test_two_processes_judge_claims_as_one_does(tmp_path, capfd):
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps(GOLD))
    answers = ["X{n} is blue.", "X{n} is green.", "Marlowe says X{n}."]
    traces = tmp_path / "traces.jsonl"
    traces.write_text(
        "".join(
            json.dumps({"qid": f"q{n}", "answer": f"{answer.format(n=n)} citations: [d{n}]"}) + "\n"
            for n in range(4)
            for answer in answers
        )
    )
    requests = {}
    with OpenAICompatibleServer(states_blue) as srv:
        for name, workers in (("one", 1), ("two", 2)):
            srv.reset_count()
            config = loopback_config(srv.base_url, tmp_path / f"cache-{name}")
            options = {"gold": str(gold)}
            run = jurist.judge(
                "gates", traces, config, out=tmp_path / name, options=options, progress=False, workers=workers
            )
            requests[name] = srv.requests
    assert requests["two"] == requests["one"] >= 12
    assert (
        run.summary["judged_claim_accuracy"]
        == run.summary["gate"]["extra_metrics"]["judged_claim_accuracy"]
        == 0.5
    )
    for name in ("summary.json", "report.md"):
        assert (tmp_path / "two" / name).read_text() == (tmp_path / "one" / name).read_text()
    assert recorded_results(tmp_path / "two") == recorded_results(tmp_path / "one")
    assert "judged in this one" not in capfd.readouterr().err
