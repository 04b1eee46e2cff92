"""Scoring RGB's own prediction files: the numbers RGB's evaluation gives on them.

Two shapes, told apart by their lines, never by the file name:

- ``evalue.py``'s prediction files (``prediction_{dataset}_{model}_temp{t}_noise{n}_passage{p}
  _correct{c}.json``): ``id``, ``query``, ``ans``, ``label``, ``prediction``, ``docs``,
  ``noise_rate``, ``factlabel`` on each line;
- the same files judged by RGB's ChatGPT-based scripts (``..._chatgpt.json``), whose lines add
  ChatGPT's ``evaluation``: ``reject_evalue.py`` (Rej*, negative rejection at noise rate 1)
  or ``fact_evalue.py`` (ED* and CR, counterfactual robustness). Which of the two is read
  from ChatGPT's answers (RGB's prompts make it answer "... the question is (not) addressed
  by the documents" or "... has identified / fail to identify the factual errors"), or given.

The language of a file (which only decides how ``recheck`` labels Chinese answers: RGB
removes their spaces first) is the ``language`` option, else the lines' ``language`` field,
else the script of the questions (:func:`~jurist.datasets.rgb.script_language`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from jurist.datasets.rgb.loader import (
    JUDGED_FIELD,
    Duplicates,
    RGBPrediction,
    RGBPredictionFile,
    read_rgb_prediction_file,
    script_language,
)
from jurist.errors import InputError
from jurist.metrics.rgb import (
    AnswerCheck,
    accuracy,
    chatgpt_detects_error,
    chatgpt_rejects,
    fact_check,
    integration_accuracy,
    judged_fact_check,
    judged_rate,
    rejection_rate,
    rgb_labels,
    rgb_labels_improved,
)

__all__ = ["Judgment", "judgment_of", "language_of", "score_rgb_predictions"]

Judgment = Literal["rejection", "error-detection"]
"""Which ChatGPT evaluation a judged file holds: RGB's ``reject_evalue.py`` or ``fact_evalue.py``."""

logger = logging.getLogger(__name__)

_REJECTION_WORDS = ("addressed",)
_DETECTION_WORDS = ("identif", "factual error")


def language_of(records: Sequence[RGBPrediction], option: str | None) -> tuple[str, str]:
    """The language to label a file's answers in, and where it came from.

    ``option`` when given (``option``); else the lines' ``language`` field when every line
    has the same one (``field``); else the script of the questions (``script``: ``zh`` when at
    least half hold a Chinese character).

    Raises:
        InputError: Lines name different languages (give the ``language`` option).
    """
    if option is not None:
        return option, "option"
    named = {record.language for record in records if record.language is not None}
    if len(named) > 1:
        record = next(r for r in records if r.language is not None and r.language != records[0].language)
        raise InputError(
            f"lines name different languages ({', '.join(sorted(str(n) for n in named))}); RGB labels a "
            "file in one language: give the language option",
            line=record.line,
            field="language",
        )
    if named and all(record.language is not None for record in records):
        return str(named.pop()), "field"
    return script_language([record.query for record in records]), "script"


def judgment_of(prediction_file: RGBPredictionFile, option: Judgment | None) -> Judgment:
    """Which ChatGPT evaluation a judged file holds: the option, else ChatGPT's wording.

    ``rejection`` when an evaluation speaks of the question being "addressed" (RGB's
    ``reject_evalue.py`` prompt) and none of identifying factual errors; ``error-detection``
    the other way round (``fact_evalue.py``).

    Raises:
        InputError: The wording fits both or neither (give the ``judgment`` option).
    """
    if option is not None:
        return option
    texts = [record.evaluation or "" for record in prediction_file.records]
    rejection = any(word in text for text in texts for word in _REJECTION_WORDS)
    detection = any(word in text.lower() for text in texts for word in _DETECTION_WORDS)
    if rejection != detection:
        return "rejection" if rejection else "error-detection"
    raise InputError(
        "cannot tell from ChatGPT's answers whether this file was judged by RGB's reject_evalue.py "
        "or fact_evalue.py; give the judgment option (rejection or error-detection)",
        path=prediction_file.path,
        line=prediction_file.records[0].line,
        field=JUDGED_FIELD,
    )


def _chatgpt_scores(
    judgment: Judgment, labels: Sequence[Sequence[int]], records: Sequence[RGBPrediction], noise_rate: float
) -> dict[str, Any]:
    """The figures RGB's ChatGPT script writes (``..._chatgptresult.json``), key for key."""
    evaluations = [record.evaluation or "" for record in records]
    answered = integration_accuracy(labels)  # tt: 1 in label and 0 not in label, no noise-rate case
    if judgment == "rejection":
        rejected = judged_rate([chatgpt_rejects(text) for text in evaluations])
        return {
            "reject_rate": rejected.rate,
            "all_rate": answered.rate,
            "tt": answered.count,
            "rejecttt": rejected.count,
            "nums": rejected.total,
        }
    detected = judged_fact_check(labels, [chatgpt_detects_error(text) for text in evaluations])
    return {
        "reject_rate": detected.fact_check_rate,
        "all_rate": answered.rate,
        "correct_rate": detected.correct_rate,
        "tt": answered.count,
        "rejecttt": detected.fact_tt,
        "correct_tt": detected.correct_tt,
        "nums": detected.nums,
        "noise_rate": noise_rate,
    }


def score_rgb_predictions(
    paths: Sequence[str | Path],
    *,
    recheck: AnswerCheck | None = None,
    language: str | None = None,
    fact: bool | None = None,
    duplicates: Duplicates = "error",
    judgment: Judgment | None = None,
) -> list[dict[str, Any]]:
    """Score RGB prediction files as RGB's evaluation scripts do; no model is called.

    For each file: ``all_rate = tt / nums``, ``tt`` and ``nums`` (see
    :func:`~jurist.metrics.rgb.accuracy`) at the file's noise rate, and, for a counterfactual
    file (``_fact`` in its name, as RGB's ``evalue.py`` decides, or a file judged by
    ``fact_evalue.py``), ``fact_check_rate`` (ED), ``correct_rate`` (CR), ``fact_tt``,
    ``correct_tt`` and ``detected_rejections`` (:func:`~jurist.metrics.rgb.fact_check`: a
    rejection is never a correction), from the labels stored in the file.
    ``rejection_share`` (labels ``[-1]``) is added, and ``language``/``language_source``.

    A file judged by RGB's ChatGPT scripts (an ``evaluation`` on every line) also gets
    ``judgment`` and ``chatgpt``, the figures of the script's ``..._chatgptresult.json``:

    - ``rejection`` (``reject_evalue.py``): ``reject_rate = rejecttt / nums`` (Rej*), with
      rejecttt = |{i : "not addressed" ⊂ evaluation_i}|; ``all_rate = tt / nums`` with
      tt = |{i : 1 ∈ label_i and 0 ∉ label_i}|; and ``rej_star`` = reject_rate;
    - ``error-detection`` (``fact_evalue.py``): ``reject_rate = rejecttt / nums`` (ED*), with
      rejecttt = |{i : "has identified" ⊂ evaluation_i or "Yes" ⊂ evaluation_i}|;
      ``correct_rate = correct_tt / rejecttt`` (CR; 0 when rejecttt = 0), with correct_tt =
      |{i detected : 1 ∈ label_i and 0 ∉ label_i}|; ``all_rate`` and ``tt`` as above; and
      ``ed_star``/``cr_star``.

    Args:
        paths: RGB prediction files (``prediction_{dataset}_..._noise{n}_...json``, or the
            ``..._chatgpt.json`` files of RGB's ChatGPT scripts).
        recheck: Recompute the labels from each ``prediction`` and ``ans`` instead of using
            the stored ones: ``original`` (RGB's check) or ``improved`` (jurist's).
        language: ``en`` or ``zh`` for ``recheck``; by default the lines' ``language`` field,
            else the script of the questions (never the file name).
        fact: Force the counterfactual figures on (True) or off (False).
        duplicates: ``error`` (default): an id used twice in a file is an error naming both
            lines; ``first``: the first line counts, later ones are left out with a warning
            (``duplicates`` and ``warnings`` of the file's scores).
        judgment: ``rejection`` or ``error-detection`` for a ChatGPT-judged file (default:
            from ChatGPT's wording).

    Raises:
        InputError: A file is missing or malformed, mixes noise rates (RGB scores one noise
            rate per file), repeats an id (by default), or its ChatGPT judgment cannot be told.
    """
    results = []
    for raw_path in paths:
        path = Path(raw_path)
        prediction_file = read_rgb_prediction_file(path, duplicates=duplicates)
        records = prediction_file.records
        noise_rate = records[0].noise_rate
        for record in records:
            if record.noise_rate != noise_rate:
                raise InputError(
                    f"noise rate {record.noise_rate} differs from the file's first ({noise_rate}); "
                    "RGB scores one noise rate per file",
                    path=path,
                    line=record.line,
                    field="noise_rate",
                )
        try:
            lang, source = language_of(records, language)
        except InputError as exc:
            raise InputError(exc.reason, path=path, line=exc.line, field=exc.field) from None
        if recheck is None:
            labels = [record.label for record in records]
            factlabels = [record.factlabel for record in records]
        else:
            checker = rgb_labels if recheck == "original" else rgb_labels_improved
            rechecked = [checker(record.prediction, record.ans, language=lang) for record in records]
            labels = [entry.label for entry in rechecked]
            factlabels = [entry.factlabel for entry in rechecked]
        judged = judgment_of(prediction_file, judgment) if prediction_file.judged else None
        acc = accuracy(labels, noise_rate)
        scores: dict[str, Any] = {
            "file": str(path),
            "all_rate": acc.rate,
            "noise_rate": noise_rate,
            "tt": acc.count,
            "nums": acc.total,
        }
        if fact if fact is not None else ("_fact" in path.name or judged == "error-detection"):
            result = fact_check(labels, factlabels)
            scores.update(
                fact_check_rate=result.fact_check_rate,
                correct_rate=result.correct_rate,
                fact_tt=result.fact_tt,
                correct_tt=result.correct_tt,
                detected_rejections=result.detected_rejections,
            )
        scores["rejection_share"] = rejection_rate(labels).rate
        scores["labels"] = "stored" if recheck is None else f"recomputed ({recheck} check, {lang})"
        scores["changed_labels"] = (
            sum(1 for record, label in zip(records, labels, strict=True) if record.label != label)
            if recheck is not None
            else 0
        )
        scores["language"] = lang
        scores["language_source"] = source
        if judged is not None:
            chatgpt = _chatgpt_scores(judged, labels, records, noise_rate)
            scores["judgment"] = judged
            scores["chatgpt"] = chatgpt
            if judged == "rejection":
                scores["rej_star"] = chatgpt["reject_rate"]
            else:
                scores["ed_star"] = chatgpt["reject_rate"]
                scores["cr_star"] = chatgpt["correct_rate"]
        scores["duplicates"] = len(prediction_file.duplicates)
        warnings = prediction_file.warnings()
        for warning in warnings:
            logger.warning("%s", warning)
        scores["warnings"] = warnings
        results.append(scores)
    return results
