"""The heritage judges' parts: the runner items of a gold set, the offline baseline program,
the output checks of the LLM program's answers, and how compiled heritage programs load.

One runner item per gold text holds its text, the sub-tasks to run, the linking mentions
of its gold and its questions; the judge's output is a
:class:`~jurist.signatures.heritage.HeritageOutput` (entities, custodian type, link
decisions, answers, BM25 retrieval for the questions).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from jurist.datasets.heritage.gold import HeritageGoldEntry, linking_gold
from jurist.errors import ArtifactError, InputError
from jurist.judges.config import JudgeConfig
from jurist.metrics.heritage.taxonomy import ENTITY_LABELS
from jurist.optimization import load_judge_program, read_artifact
from jurist.programs.heritage.baseline import (
    Bm25Retriever,
    ExtractiveQA,
    FuzzyLinker,
    KeywordTypeClassifier,
    RegexGazetteerExtractor,
)
from jurist.programs.heritage.program import (
    HeritageProgram,
    anchor_entities,
    classification_output,
    linking_output,
    qa_output,
)
from jurist.runner import Item
from jurist.signatures.heritage import (
    EntityExtraction,
    HeritageOutput,
    LinkDecision,
    RetrievalResult,
)
from jurist.tasks.heritage.optimization import PROGRAM_PARTS, part_options

__all__ = [
    "ALL_TASKS",
    "RETRIEVAL_DEPTH",
    "HeritageBaselineProgram",
    "check_tasks",
    "heritage_items",
    "llm_postprocess",
    "corpus_retriever",
    "load_heritage_programs",
]

ALL_TASKS: tuple[str, ...] = ("ner", "classification", "linking", "qa", "retrieval")
"""The heritage sub-tasks a run can include."""
RETRIEVAL_DEPTH = 20


def check_tasks(tasks: Sequence[str]) -> tuple[str, ...]:
    """The sub-tasks in :data:`ALL_TASKS` order.

    Raises:
        InputError: None is given, or one is not a heritage sub-task.
    """
    unknown = [t for t in tasks if t not in ALL_TASKS]
    if unknown or not tasks:
        raise InputError(
            f"unknown heritage tasks {unknown}; choose from {', '.join(ALL_TASKS)}", field="tasks"
        )
    return tuple(t for t in ALL_TASKS if t in tasks)


def heritage_items(entries: Sequence[HeritageGoldEntry], tasks: Sequence[str] = ALL_TASKS) -> list[Item]:
    """One runner item per gold text: its text, its gold mentions and its questions.

    Mentions carry the ids of :func:`~jurist.datasets.heritage.linking_gold`; questions are
    ``"{entry_id}#q{i}"``. Gold answers, types and spans are not in the inputs.
    """
    by_entry: dict[str, list[dict[str, Any]]] = {}
    for record in linking_gold(entries):
        by_entry.setdefault(record.entry_id, []).append(
            {"id": record.id, "mention": record.mention, "start": record.start, "end": record.end}
        )
    return [
        Item(
            id=entry.id,
            inputs={
                "text": entry.text,
                "tasks": list(tasks),
                "mentions": by_entry.get(entry.id, []) if "linking" in tasks else [],
                "questions": (
                    [{"id": f"{entry.id}#q{i}", "question": p.question} for i, p in enumerate(entry.qa_pairs)]
                    if {"qa", "retrieval"} & set(tasks)
                    else []
                ),
            },
        )
        for entry in entries
    ]


def _retrieval(
    retriever: Bm25Retriever | None, questions: Sequence[Mapping[str, Any]]
) -> list[RetrievalResult]:
    if retriever is None:
        return []
    return [
        RetrievalResult(
            id=q["id"], query=q["question"], results=retriever.search(q["question"], RETRIEVAL_DEPTH)
        )
        for q in questions
    ]


class HeritageBaselineProgram:
    """The offline heritage program: regex/gazetteer NER, keyword types, fuzzy linking,
    extractive QA and BM25 retrieval, with the same output as the LLM program."""

    def __init__(
        self,
        *,
        labels: Sequence[str] = ENTITY_LABELS,
        linker: FuzzyLinker | None = None,
        retriever: Bm25Retriever | None = None,
    ) -> None:
        self.extractor = RegexGazetteerExtractor(labels)
        self.classifier = KeywordTypeClassifier()
        self.linker = linker
        self.qa = ExtractiveQA()
        self.retriever = retriever

    def __call__(
        self,
        *,
        text: str,
        tasks: Sequence[str],
        mentions: Sequence[Mapping[str, Any]] = (),
        questions: Sequence[Mapping[str, Any]] = (),
        **_: Any,
    ) -> HeritageOutput:
        entities = self.extractor(text) if {"ner", "classification"} & set(tasks) else []
        output = HeritageOutput(tasks=list(tasks))
        if "ner" in tasks:
            output.entities = entities
        if "classification" in tasks:
            output.classification = self.classifier(text, entities)
        if "linking" in tasks and self.linker is not None:
            for m in mentions:
                found, nil = self.linker(m["mention"], text, m.get("start"))
                output.links.append(LinkDecision(id=m["id"], mention=m["mention"], candidates=found, nil=nil))
        if "qa" in tasks:
            output.answers = [self.qa(q["question"], text, id=q["id"]) for q in questions]
        if "retrieval" in tasks:
            output.retrieval = _retrieval(self.retriever, questions)
        return output


def llm_postprocess(
    labels: Sequence[str], retriever: Bm25Retriever | None
) -> Callable[[Any, dict[str, Any]], HeritageOutput]:
    """The output check of the LLM program: anchored entities, a valid type, links among the
    offered candidates, grounded answers; BM25 retrieval (``retriever``) for the questions."""

    def postprocess(prediction: Any, inputs: dict[str, Any]) -> HeritageOutput:
        tasks = inputs["tasks"]
        text = inputs["text"]
        output = HeritageOutput(tasks=list(tasks))
        if "ner" in tasks:
            extraction: EntityExtraction = anchor_entities(
                text, getattr(prediction.extraction, "entities", None) or [], labels
            )
            output.entities, output.flagged_entities = extraction.entities, extraction.flagged
        if "classification" in tasks:
            output.classification = classification_output(prediction.classification)
        if "linking" in tasks:
            for m in inputs.get("mentions", []):
                raw = prediction.links[m["id"]]
                output.links.append(linking_output(raw, raw.candidates, id=m["id"], mention=m["mention"]))
        if "qa" in tasks:
            output.answers = [
                qa_output(prediction.answers[q["id"]], text, id=q["id"], question=q["question"])
                for q in inputs.get("questions", [])
            ]
        if "retrieval" in tasks:
            output.retrieval = _retrieval(retriever, inputs.get("questions", []))
        return output

    return postprocess


_INDEXED: list[tuple[Mapping[str, str], Bm25Retriever]] = []
"""The BM25 indexes built last in this process, each with the texts it indexes."""


def corpus_retriever(documents: Mapping[str, str] | None) -> Bm25Retriever | None:
    """The BM25 retriever over ``documents`` (``{doc_id: text}``; ``None`` or none: no
    retrieval), built once for the same mapping object: a judge's output check searches
    with it for every item it judges."""
    if not documents:
        return None
    for indexed, retriever in _INDEXED:
        if indexed is documents:
            return retriever
    retriever = Bm25Retriever(documents)
    _INDEXED[:] = [(documents, retriever), *_INDEXED[:3]]
    return retriever


def load_heritage_programs(
    config: JudgeConfig, program: HeritageProgram, *, labels: Sequence[str] = ENTITY_LABELS
) -> JudgeConfig:
    """Load the artifacts ``config.program`` names into the parts of ``program``; the config to run with.

    ``config.program`` is one artifact file, or a directory whose ``*.json`` files are all
    artifacts. Each artifact was compiled by ``jurist optimize heritage-ner``,
    ``heritage-classification``, ``heritage-linking`` or ``heritage-qa`` and loads into the
    extractor, classifier, linker or answerer (through
    :func:`~jurist.optimization.load_judge_program`); the other parts stay uncompiled. With
    the baseline config (no model given) the artifacts' own config is used, so they must
    agree on it.

    Raises:
        InputError: The path does not exist, or the directory holds no ``*.json`` file.
        ArtifactError: A file is not a heritage artifact (e.g. one compiled for ragbench),
            two artifacts fill the same part, an artifact's labels differ from ``labels``,
            or the artifacts were compiled with different configs and none is given.
    """
    source = config.program
    if source is None or not source.exists():
        raise InputError("compiled program not found", path=source, field="program")
    files = sorted(source.glob("*.json")) if source.is_dir() else [source]
    if not files:
        raise InputError("no compiled program (*.json) in this directory", path=source, field="program")
    filled: dict[str, Path] = {}
    runtimes: dict[str, tuple[Path, JudgeConfig]] = {}
    for file in files:
        artifact = read_artifact(file)
        part = PROGRAM_PARTS.get(artifact.task)
        if part is None:
            raise ArtifactError(
                f"{file}: compiled for the task '{artifact.task}', not for a heritage program "
                f"({', '.join(PROGRAM_PARTS)}); use it with `jurist judge {artifact.task}`"
            )
        if artifact.task in filled:
            raise ArtifactError(
                f"{file}: a second artifact for {artifact.task} (the first is {filled[artifact.task]}); "
                "keep one artifact per heritage program"
            )
        filled[artifact.task] = file
        _, runtime = load_judge_program(
            config.model_copy(update={"program": file}),
            task=artifact.task,
            program=getattr(program, part),
            options=part_options(artifact.task, labels),
        )
        runtimes[runtime.model_copy(update={"program": None}).fingerprint()] = (file, runtime)
    if len(runtimes) > 1:
        models = "; ".join(f"{file.name}: {runtime.model}" for file, runtime in runtimes.values())
        raise ArtifactError(
            f"{source}: the artifacts were compiled with different judge configs ({models}); "
            "give the one to run them all with (--config or --model)"
        )
    _, runtime = next(iter(runtimes.values()))
    return runtime.model_copy(update={"program": source})
