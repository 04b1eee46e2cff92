"""Helpers of the RGB tests: the small RGB slices, hand-built rows, and a loopback reply
that answers like a model under test (RGB's prompt) and like the Rej*/ED* judges."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from jurist.testing import last_user_message

TEST_KEY_ENV = "JURIST_TEST_API_KEY"
DATA_DIR = Path(__file__).parent.parent / "data" / "rgb"
REJECTION_EN = "I can not answer the question because of the insufficient information in documents."
REJECTION_ZH = "文档信息不足，因此我无法基于提供的文档回答该问题。"
FACTUAL_ERRORS_EN = "There are factual errors in the provided documents."
# A field's text ends at the next field marker or at DSPy's closing request ("Respond with the
# corresponding output fields ..."), which names the output fields (e.g. `detects_error`).
_SECTION = re.compile(r"\[\[ ## (\w+) ## \]\]\n(.*?)(?=\n\n\[\[ ## |\n\nRespond with |\Z)", re.S)


def _system(body: dict[str, Any]) -> str | None:
    for message in body.get("messages", []):
        if message.get("role") == "system":
            return str(message.get("content"))
    return None


def _chat_answer(fields: dict[str, str]) -> str:
    return "\n\n".join(f"[[ ## {name} ## ]]\n{value}" for name, value in fields.items()) + (
        "\n\n[[ ## completed ## ]]"
    )


def rgb_reply(body: dict[str, Any]) -> str:
    """The loopback model: a responder under RGB's prompt, or one of the two DSPy judges.

    - Rejection judge (its prompt has a ``rejects`` output): rejects when the answer has
      "insufficient", "信息不足" or "cannot".
    - Error-detection judge (``detects_error``): detects when the answer has "error" or "错误".
    - Model under test (RGB's prompt): with passages, the first passage line, prefixed by
      RGB's factual-errors sentence when a passage says FAKE, or RGB's rejection sentence
      when a passage says NOISE only; without passages (closed book): "I do not know.".
    """
    system = _system(body) or ""
    user = last_user_message(body)
    if "`rejects`" in system:
        answer = dict(_SECTION.findall(user)).get("answer", "")
        rejects = any(word in answer for word in ("insufficient", "信息不足", "cannot"))
        return _chat_answer({"reason": "checked", "rejects": str(rejects)})
    if "`detects_error`" in system:
        answer = dict(_SECTION.findall(user)).get("answer", "")
        detects = "error" in answer.lower() or "错误" in answer
        return _chat_answer({"reason": "checked", "detects_error": str(detects)})
    if not system:
        return "I do not know."
    docs_part = re.split(r"\n\n(?:Question|问题)", user, maxsplit=1)[0]
    lines = [line for line in docs_part.splitlines()[1:] if line.strip()]
    if lines and all("NOISE" in line for line in lines):
        return REJECTION_ZH if "文档" in user[:3] else REJECTION_EN
    first = lines[0].strip() if lines else ""
    if any("FAKE" in line for line in lines):
        return f"{FACTUAL_ERRORS_EN} {first}"
    return first


def plain_rows(count: int = 4) -> list[dict[str, Any]]:
    """Hand-built plain RGB rows: positives state the answer, negatives say NOISE."""
    return [
        {
            "id": i,
            "query": f"Who won contest {i}?",
            "answer": [[f"Winner{i}", f"Champion{i}"]] if i % 2 else f"Winner{i}",
            "positive": [f"Contest {i} was won by Winner{i} in {2000 + i}." for _ in range(3)],
            "negative": [f"NOISE passage {j} about contest {i}." for j in range(4)],
        }
        for i in range(count)
    ]


def fact_rows(count: int = 3) -> list[dict[str, Any]]:
    """Hand-built counterfactual rows: wrong passages say FAKE."""
    return [
        {
            "id": i,
            "query": f"Where is venue {i}?",
            "answer": f"City{i}",
            "fakeanswer": f"Town{i}",
            "positive": [f"Venue {i} is in City{i}.", f"City{i} hosts venue {i}."],
            "positive_wrong": [f"FAKE: venue {i} is in Town{i}.", f"FAKE: Town{i} hosts venue {i}."],
            "negative": [f"NOISE about venue {i}."],
        }
        for i in range(count)
    ]


def write_rgb(path: Path, rows: list[dict[str, Any]]) -> Path:
    """Write rows as RGB does: JSONL under a ``.json`` name."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


def run_suite(data: Any, out: Path, config: Any = None, *, workers: int = 1, **options: Any) -> Any:
    """The RGB suite as ``jurist.judge("rgb", data, config, out=out, options=options)`` runs it
    (no progress bars): its :class:`~jurist.tasks.rgb.RGBSuiteRun`."""
    import jurist

    judged = jurist.judge("rgb", data, config, out=out, options=options, progress=False, workers=workers)
    return judged.extra["suite"]


def run_setting(
    setting: Any, out: Path, config: Any = None, *, judge_config: Any = None, workers: int = 1
) -> Any:
    """One RGB set at one setting (an :class:`~jurist.tasks.rgb.RGBSetting`), as the suite runs
    it on the setting's file with that set alone: its :class:`~jurist.tasks.rgb.RGBRun`."""
    options: dict[str, Any] = {"languages": [setting.language], "judge_config": judge_config}
    if setting.set in ("counterfactual", "closed_book"):
        options.update(
            sets=["counterfactual"],
            counterfactual_noise_rate=setting.noise_rate,
            correct_rate=setting.correct_rate,
            closed_book=setting.set == "closed_book",
        )
        if setting.set == "counterfactual":
            options["passage_num"] = setting.passage_num
    else:
        options.update(sets=[setting.set], passage_num=setting.passage_num)
        if setting.set == "noise":
            options["noise_rates"] = [setting.noise_rate]
        elif setting.set == "integration":
            options["integration_noise_rates"] = [setting.noise_rate]
    suite = run_suite(setting.path, out, config, workers=workers, **options)
    return next(run for run in suite.runs if run.setting.name == setting.name)
