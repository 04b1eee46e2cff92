"""Optimizing the heritage programs with one example per mention or question: entity
linking and question answering (see :mod:`jurist.tasks.heritage.optimization`): their gold
examples, programs, the output check of an answer, and the score of one example with feedback."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

import dspy

from jurist.datasets.heritage.conll import TagDecoding
from jurist.datasets.heritage.gold import linking_gold
from jurist.datasets.heritage.kb import KnowledgeBase, load_knowledge_base
from jurist.metrics.heritage.linking import linking_example_score
from jurist.metrics.heritage.qa import qa_example_score, rouge_l, words
from jurist.optimization import MetricResult, content_key
from jurist.programs.heritage.baseline import FuzzyLinker
from jurist.programs.heritage.program import HeritageEntityLinker, linking_output, qa_output
from jurist.tasks.heritage.optimization import gold_entries, listing, none_found

__all__ = [
    "knowledge_base",
    "linking_examples",
    "linking_output_of",
    "linking_program",
    "linking_score",
    "qa_examples",
    "qa_output_of",
    "qa_score",
]


class _SharedLinker(FuzzyLinker):
    """A candidate source that optimizers' program copies share instead of copying the KB."""

    def __deepcopy__(self, memo: dict[int, Any]) -> _SharedLinker:
        return self


@lru_cache(maxsize=4)
def _read_kb(path: str | None, stamp: tuple[int, int] | None) -> KnowledgeBase:
    return load_knowledge_base(path)


def knowledge_base(path: str | Path | None) -> KnowledgeBase:
    """The knowledge base at ``path`` (``None``: the bundled subset), read once while the file
    is unchanged: the linking score names the gold entry of every example it scores."""
    if path is None or str(path) == "sample:heritage-kb":
        return _read_kb(None, None)
    file = Path(path)
    stat = file.stat() if file.is_file() else None
    return _read_kb(str(file), (stat.st_mtime_ns, stat.st_size) if stat else None)


def linking_program(kb: KnowledgeBase) -> dspy.Module:
    """The linker with candidates from a :class:`~jurist.programs.heritage.baseline.FuzzyLinker`
    over the knowledge base, as in ``jurist judge heritage``; optimizers' program copies share it."""
    return HeritageEntityLinker(_SharedLinker(kb))


def linking_examples(path: str | Path, tags: TagDecoding | None) -> list[dspy.Example]:
    """One example per linked gold mention (:func:`~jurist.datasets.heritage.linking_gold`).

    Raises:
        InputError: No entry carries an entity_linking mention.
    """
    entries, file = gold_entries(path, tags)
    texts = {entry.id: entry.text for entry in entries}
    examples = []
    for record in linking_gold(entries):
        text = texts[record.entry_id]
        example = dspy.Example(
            mention=record.mention,
            context=text,
            start=record.start,
            gold_kb_id=record.gold_kb_id,
            example_id=record.id,
            example_key=content_key(record.mention, text, record.start),
            example_group=record.entry_id,
        )
        examples.append(example.with_inputs("mention", "context", "start"))
    if not examples:
        raise none_found(file, "an entity_linking mention", "entity_linking")
    return examples


def linking_output_of(prediction: Any, inputs: dict[str, Any]) -> dict[str, Any]:
    """The linker's checked decision, with the ids of the candidates it was offered."""
    offered = list(getattr(prediction, "candidates", None) or [])
    decision = linking_output(prediction, offered, id=str(inputs["mention"]), mention=inputs["mention"])
    return {**decision.model_dump(mode="json"), "offered": [c.kb_id for c in offered]}


def _namer(kb: KnowledgeBase) -> Callable[[str], str]:
    def name(kb_id: str) -> str:
        entry = kb.get(kb_id)
        return f"{kb_id} ({entry.label})" if entry is not None else kb_id

    return name


def linking_score(example: dspy.Example, output: dict[str, Any], kb: KnowledgeBase) -> MetricResult:
    """The reciprocal rank of the gold id (NIL: 1 for NIL), saying where the gold entry was."""
    name = _namer(kb)
    gold: str | None = example.get("gold_kb_id")
    ranked = [c["kb_id"] for c in output.get("candidates") or []]
    nil = bool(output.get("nil"))
    score = linking_example_score(gold, ranked, nil)
    offered = output.get("offered") or []
    mention = repr(example.mention)
    details: dict[str, Any] = {"reciprocal_rank": score, "gold_nil": float(gold is None)}
    top = name(ranked[0]) if ranked else "nothing"
    if gold is None:
        details["nil_correct"] = float(nil)
        line = (
            f"Correct: {mention} has no entry in the knowledge base (NIL), and the judge said NIL."
            if nil
            else f"Wrong: {mention} has no entry in the knowledge base (NIL), but the judge linked it "
            f"to {top}. Answer NIL when no candidate is the institution meant."
        )
        lines = [line]
    else:
        details["gold_offered"] = float(gold in offered)
        where = (
            f"it was candidate {offered.index(gold) + 1} of {len(offered)} offered"
            if gold in offered
            else "it was not among the offered candidates, so no answer could be right here"
        )
        if nil:
            lines = [f"Wrong: {mention} is {name(gold)} ({where}), but the judge answered NIL."]
        elif score == 1.0:
            lines = [f"Correct: {mention} is {name(gold)}, ranked first."]
        elif score:
            lines = [
                f"Partly right: {mention} is {name(gold)}, but the judge ranked it "
                f"{ranked.index(gold) + 1} (reciprocal rank {score:.2f}) behind {top}."
            ]
        else:
            lines = [f"Wrong: {mention} is {name(gold)} ({where}); the judge ranked {top} first."]
    if output.get("dropped_ids"):
        lines.append(
            f"Ids that were not among the candidates were ignored: {', '.join(output['dropped_ids'])}."
        )
    return MetricResult(score, " ".join(lines), details)


def qa_examples(path: str | Path, tags: TagDecoding | None) -> list[dspy.Example]:
    """One example per gold question (id ``{entry_id}#q{i}``, as in ``jurist judge heritage``).

    Raises:
        InputError: No entry carries a question.
    """
    entries, file = gold_entries(path, tags)
    examples = [
        dspy.Example(
            question=pair.question,
            context=entry.text,
            gold_answer=pair.answer,
            gold_facts=list(pair.supporting_facts),
            example_id=f"{entry.id}#q{index}",
            example_key=content_key(pair.question, entry.text),
            example_group=entry.id,
        ).with_inputs("question", "context")
        for entry in entries
        for index, pair in enumerate(entry.qa_pairs)
    ]
    if not examples:
        raise none_found(file, "a qa_pairs question", "qa_pairs")
    return examples


def qa_output_of(prediction: Any, inputs: dict[str, Any]) -> dict[str, Any]:
    """The answerer's checked answer (quotes not in the context set aside)."""
    answer = qa_output(prediction, inputs["context"], id="", question=inputs["question"])
    return answer.model_dump(mode="json")


def qa_score(example: dspy.Example, output: dict[str, Any]) -> MetricResult:
    """ROUGE-L F of the answer against the gold answer, naming missing words and ungrounded quotes."""
    answer, gold = str(output.get("answer") or ""), str(example.gold_answer)
    score = qa_example_score(answer, gold)
    parts = rouge_l(answer, gold)
    details = {"rouge_l": score, "precision": parts["precision"], "recall": parts["recall"]}
    lines = [
        f"ROUGE-L F {score:.2f} against the gold answer {gold!r} (precision {parts['precision']:.2f}: "
        f"share of the answer's words in sequence with the gold; recall {parts['recall']:.2f})."
    ]
    seen = set(words(answer))
    missing = list(dict.fromkeys(w for w in words(gold) if w not in seen))
    if missing:
        lines.append(f"Gold words missing from the answer: {', '.join(missing[:12])}.")
    if parts["precision"] < 0.5 and len(words(answer)) > 2 * len(words(gold)):
        lines.append("The answer is much longer than the gold answer: answer in one short sentence.")
    if output.get("ungrounded_facts"):
        quotes = [repr(q) for q in output["ungrounded_facts"]]
        lines.append(f"Quotes not found in the context: {listing(quotes)}; quote the context word for word.")
    return MetricResult(score, " ".join(lines), details)
