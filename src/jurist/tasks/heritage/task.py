"""The heritage custodian tasks: ``heritage`` (every sub-task of a run) and one task per LLM
program (``heritage-ner``, ``heritage-classification``, ``heritage-linking``, ``heritage-qa``)
that judges and scores that sub-task alone, and is calibrated and optimized on its own."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import dspy
import pandas as pd
from pydantic import BaseModel

from jurist.datasets.heritage.conll import TagDecoding, is_token_tag_file
from jurist.datasets.heritage.kb import load_knowledge_base
from jurist.errors import ConfigError
from jurist.judges.config import JudgeConfig
from jurist.judges.judge import BaselineJudge, Judge
from jurist.metrics.heritage.taxonomy import ENTITY_LABELS
from jurist.optimization import MetricResult
from jurist.programs.heritage.baseline import FuzzyLinker
from jurist.programs.heritage.program import (
    HeritageEntityExtractor,
    HeritageProgram,
    HeritageQuestionAnswerer,
    HeritageTypeClassifier,
)
from jurist.report.figures import Figure
from jurist.report.review import Review
from jurist.runner import Item
from jurist.schemas import ItemResult
from jurist.tasks._calibration import CalibrationPlan
from jurist.tasks._contract import JudgeRun, Postprocess, Scores, Task, json_ready
from jurist.tasks._other_files import OtherFiles
from jurist.tasks._recorded_run import recorded_run
from jurist.tasks.heritage import optimize_linking_qa, optimize_text
from jurist.tasks.heritage.calibration import subtask_calibration
from jurist.tasks.heritage.compare import paired_tests
from jurist.tasks.heritage.figures import heritage_figures, heritage_review, type_gold_rows
from jurist.tasks.heritage.judging import (
    ALL_TASKS,
    HeritageBaselineProgram,
    check_tasks,
    corpus_retriever,
    heritage_items,
    llm_postprocess,
    load_heritage_programs,
)
from jurist.tasks.heritage.optimization import part_options
from jurist.tasks.heritage.options import (
    ClassificationOptions,
    HeritageOptions,
    LinkingOptions,
    NerOptions,
    QAOptions,
    documents_of,
    tag_decoding,
    with_documents,
)
from jurist.tasks.heritage.report import render_comparison, render_report
from jurist.tasks.heritage.run import HeritageRun, read_heritage_run
from jurist.tasks.heritage.score_tags import score_tagged_predictions
from jurist.tasks.heritage.scoring import HeritagePass, target_table

__all__ = [
    "HeritageClassificationTask",
    "HeritageLinkingTask",
    "HeritageNerTask",
    "HeritageQATask",
    "HeritageTask",
]


@dataclass(frozen=True)
class RunSetup:
    """What a heritage run judges: its sub-tasks, entity types, knowledge base and split."""

    tasks: tuple[str, ...]
    labels: tuple[str, ...]
    kb: Path | None
    split: str | None
    stratify: tuple[str, ...]
    seed: int
    tags: TagDecoding | None = None


class HeritageTask(Task):
    """Heritage custodian evaluation: entities, custodian type, entity links, answers and
    retrieval over a gold set of texts about heritage institutions, with the framework's
    target table."""

    name = "heritage"
    description = (
        "Judge heritage-institution texts (heritage custodian evaluation): typed entity spans, "
        "custodian type (GLAMORCUBESFIXPHDNT), links to a knowledge base or NIL, answers to "
        "questions, BM25 retrieval. Scores every metric of the framework against the gold "
        "the file carries, with the target table (pass/fail per row)."
    )
    inputs = {
        "text": "the text about a heritage institution",
        "tasks": "the sub-tasks to run",
        "mentions": "the gold mentions to link (id, mention, offsets)",
        "questions": "the gold questions (id, question)",
    }
    outputs = {
        "entities": "typed entity spans anchored in the text (flagged ones set aside)",
        "classification": "primary and secondary custodian types, rationale",
        "links": "per mention: ranked knowledge-base candidates, or NIL",
        "answers": "per question: answer, supporting quotes (ungrounded ones set aside)",
        "retrieval": "per question: BM25 ranking of the gold texts",
    }
    metrics = {
        "ner_strict_f1": "entity F1, same span and type (also partial and token level)",
        "type_accuracy": "primary custodian type accuracy (also macro/weighted F1, hierarchy)",
        "linking_hits@1": "gold id ranked first (also Hits@K, MRR, NIL F1)",
        "retrieval_ndcg@10": "NDCG@10 of the BM25 ranking (also P/R@K, MRR)",
        "qa_faithfulness": "lexical grounding of the answers (also ROUGE, factual accuracy)",
    }
    Options: ClassVar[type[BaseModel]] = HeritageOptions
    default_data: ClassVar[str | None] = "sample:heritage"

    # ------------------------------------------------------------------ setup

    def setup(self, options: BaseModel) -> RunSetup:
        """The run an option set describes (a sub-task's task runs its sub-task alone)."""
        return RunSetup(
            tasks=check_tasks(getattr(options, "tasks", ALL_TASKS)),
            labels=tuple(getattr(options, "labels", ENTITY_LABELS)),
            kb=getattr(options, "kb", None),
            split=getattr(options, "split", None),
            stratify=tuple(getattr(options, "stratify", ("custodian_type",))),
            seed=getattr(options, "seed", 0),
            tags=tag_decoding(options),
        )

    # ------------------------------------------------------------------ reading and judging

    def read(self, path: str | Path, options: BaseModel) -> HeritageRun:
        """The gold set, the texts the run judges (all, or one part of the split) and its setup."""
        setup = self.setup(options)
        return read_heritage_run(
            path,
            tasks=setup.tasks,
            labels=setup.labels,
            kb=setup.kb,
            split=setup.split,
            stratify=setup.stratify,
            seed=setup.seed,
            tags=setup.tags,
        )

    def items(self, dataset: HeritageRun, options: BaseModel) -> list[Item]:
        return heritage_items(dataset.entries, self.setup(options).tasks)

    def program(self, options: BaseModel) -> dspy.Module:
        """The LLM heritage program; its linker offers candidates from the knowledge base when
        ``linking`` is a sub-task."""
        setup = self.setup(options)
        return HeritageProgram(labels=setup.labels, candidate_source=self._linker(setup))

    def postprocess(self, prediction: Any, inputs: dict[str, Any], options: BaseModel) -> dict[str, Any]:
        """The program's answers checked (:func:`~jurist.tasks.heritage.judging.llm_postprocess`),
        with BM25 retrieval over the texts of :meth:`judge_options` (none without them)."""
        retriever = corpus_retriever(documents_of(options))
        output = llm_postprocess(self.setup(options).labels, retriever)(prediction, inputs)
        return output.model_dump(mode="json")

    def baseline(self, options: BaseModel) -> Judge:
        """The offline heritage program: regex/gazetteer entities, keyword types, fuzzy linking,
        extractive answers and BM25 retrieval over the texts of :meth:`judge_options`."""
        setup = self.setup(options)
        program = HeritageBaselineProgram(
            labels=setup.labels,
            linker=self._linker(setup),
            retriever=corpus_retriever(documents_of(options)) if "retrieval" in setup.tasks else None,
        )
        return BaselineJudge(program, name="baseline", version="1")

    def load_program(self, config: JudgeConfig, program: dspy.Module, options: BaseModel) -> JudgeConfig:
        """The artifacts ``config.program`` names (one file, or a directory of them: one per
        sub-program) loaded into the program's parts
        (:func:`~jurist.tasks.heritage.judging.load_heritage_programs`)."""
        assert isinstance(program, HeritageProgram)
        source = program.linker.candidate_source
        runtime = load_heritage_programs(config, program, labels=self.setup(options).labels)
        program.linker.candidate_source = source  # after loading: DSPy copies the program to load it
        return runtime

    def judge_options(self, dataset: HeritageRun, options: BaseModel) -> BaseModel:
        """``options`` with the gold set's texts when the run retrieves (BM25 searches them all)
        and the knowledge base's SHA-256 when it links (the run's verdicts are keyed by both)."""
        tasks = self.setup(options).tasks
        documents = dataset.documents if "retrieval" in tasks else None
        kb = dataset.setup.get("kb") if "linking" in tasks else None
        kb_sha256 = kb.get("sha256") if isinstance(kb, dict) else None
        if documents is None and kb_sha256 is None:
            return options
        return with_documents(options, documents, kb_sha256)

    @staticmethod
    def _linker(setup: RunSetup) -> FuzzyLinker | None:
        """The fuzzy linker over the run's knowledge base when ``linking`` is a sub-task."""
        return FuzzyLinker(load_knowledge_base(setup.kb)) if "linking" in setup.tasks else None

    # ------------------------------------------------------------------ scoring

    k_values: tuple[int, ...] = (1, 5, 10)
    """K of linking Hits@K."""
    retrieval_k: tuple[int, ...] = (5, 10, 20)
    """K of retrieval NDCG/P/R@K."""
    similarity: Callable[[str, str], float] | None = None
    """``f(question, answer) -> [0, 1]`` for QA relevance; ``None``: not measured (see
    :func:`~jurist.tasks.heritage.rescoring.score_heritage`)."""

    def _pass(self, options: BaseModel) -> HeritagePass:
        """The one pass over the run being scored that its scoring parts share
        (:class:`~jurist.tasks.heritage.scoring.HeritagePass`): gold from the scoring or the
        run's manifest, the entity types the run was judged with and its tag decoding."""
        run = recorded_run()

        def make() -> HeritagePass:
            return HeritagePass(
                run.path,
                run.manifest,
                run.gold,
                tags=self.setup(options).tags,
                k_values=self.k_values,
                retrieval_k=self.retrieval_k,
                similarity=self.similarity,
                empty_queries=getattr(options, "empty_queries", "zero"),
            )

        return run.shared("heritage", make)

    def item_row(self, result: ItemResult, options: BaseModel) -> dict[str, Any]:
        """Status and usage, whether the text is in the gold, and each judged sub-task's
        per-text figures (see :mod:`jurist.tasks.heritage.scorers`)."""
        return self._pass(options).row(result)

    def summarize(self, items: pd.DataFrame, options: BaseModel, gold: str | Path | None) -> dict[str, Any]:
        """Every corpus metric of the sub-tasks scored, with the gold counts and the
        framework's target table (pass/fail per row)."""
        return self._pass(options).summary(items)

    def extras(self, items: pd.DataFrame, gold: str | Path | None, options: BaseModel) -> dict[str, Any]:
        """``mentions``: one row per linked gold mention; ``targets``: the target table."""
        scored = self._pass(options)
        return {"mentions": scored.mentions(), "targets": target_table(scored.headline)}

    def export_files(self, scores: Scores, options: BaseModel) -> dict[str, pd.DataFrame | str]:
        """``mentions.csv`` and ``targets.csv`` (the tables of :meth:`extras`)."""
        return {"mentions.csv": scores.extra["mentions"], "targets.csv": scores.extra["targets"]}

    def compared_run(self, options: BaseModel) -> Path | None:
        """The run the option ``compare`` names."""
        compare: Path | None = getattr(options, "compare", None)
        return compare

    def comparison(self, scores: Scores, other: Scores, options: BaseModel) -> dict[str, pd.DataFrame]:
        """``comparison``: paired significance tests of the per-text scores both runs have
        (:func:`~jurist.tasks.heritage.compare.paired_tests`)."""
        return {"comparison": paired_tests(scores.items, other.items)}

    def other_files(self, options: BaseModel) -> Sequence[OtherFiles]:
        """A tagger's predictions in a token-tag file (``.conll``, ``.bio``, ``.iob``, ...; see
        :func:`~jurist.datasets.heritage.conll.is_token_tag_file`): its entities scored
        against ``--gold`` (NER metrics only), one file at a time."""
        return [OtherFiles("token-tag prediction files", _token_tag_file, self._score_tags)]

    def _score_tags(self, paths: list[Path], options: BaseModel, gold: str | Path | None) -> Scores:
        """The token-tag predictions ``paths[0]`` scored against ``gold`` with the run's
        decoding (:func:`~jurist.tasks.heritage.score_tags.score_tagged_predictions`)."""
        if gold is None:
            raise ConfigError("scoring token-tag predictions needs the gold file (--gold)", field="gold")
        setup = self.setup(options)
        # The entity types of the files, unless --labels names others than the default.
        labels = setup.labels if setup.labels != tuple(ENTITY_LABELS) else None
        tagged = score_tagged_predictions(paths[0], gold, tags=setup.tags, labels=labels)
        tagged.summary = json_ready(tagged.summary)
        return tagged

    def report(self, scores: Scores) -> str:
        items = scores.items
        text = render_report(scores.summary, items[items["status"] == "failed"])
        if "comparison" in scores.summary:
            run_a, run_b = scores.extra["compared"]
            text += "\n" + render_comparison(scores.summary["comparison"], run_a, run_b)
        return text

    def review(self, options: BaseModel) -> Review:
        return heritage_review(self.setup(options).tasks, labelled=False)

    def figures(self, scores: Scores, options: BaseModel) -> list[Figure]:
        """Each scored sub-task's plots and the target table (see :mod:`jurist.tasks.heritage.figures`)."""
        return heritage_figures(scores.summary)

    def summary_lines(self, run: JudgeRun) -> list[str]:
        lines = super().summary_lines(run)[:1]
        for row in run.summary["targets"]:
            value = "n/a" if row["value"] is None else f"{row['value']:.3f}"
            lines.append(f"  {row['task']} {row['metric']}: {value} ({row['status']})")
        return [*lines, f"report: {run.run_dir / 'report.md'}"]


def _token_tag_file(path: Path) -> bool:
    """Whether ``path`` is a token-tag file (a tagger's predictions), not a run of jurist's."""
    return is_token_tag_file(path) and path.is_file()


class _SubTask(HeritageTask):
    """A heritage task that runs one sub-task (one LLM program), calibrated and optimized on its own.

    ``jurist optimize`` compiles that program alone (:meth:`optimization_program`), on the
    examples of the sub-task's gold (see :mod:`jurist.tasks.heritage.optimization`).
    """

    subtask: ClassVar[str]

    def setup(self, options: BaseModel) -> RunSetup:
        return RunSetup(
            tasks=(self.subtask,),
            labels=tuple(getattr(options, "labels", ENTITY_LABELS)),
            kb=getattr(options, "kb", None),
            split=getattr(options, "split", None),
            stratify=tuple(getattr(options, "stratify", ("custodian_type",))),
            seed=getattr(options, "seed", 0),
            tags=tag_decoding(options),
        )

    def calibration(self, gold: Path, settings: Mapping[str, Any]) -> CalibrationPlan:
        """Every text of the gold file judged (whatever the ``split`` option), compared with
        the texts that carry this sub-task's gold (see :mod:`jurist.tasks.heritage.calibration`)."""
        options = self.options(settings.get("options"))
        setup = self.setup(options)
        return subtask_calibration(self, options, gold, settings, labels=setup.labels, tags=setup.tags)

    def program_options(self, options: BaseModel) -> dict[str, Any]:
        """The entity types when they are not the default ones (they change the extractor)."""
        return part_options(self.name, self.setup(options).labels)


def _subtask_description(program: str, what: str) -> str:
    return (
        f"The heritage {what} alone ({program}): `jurist judge heritage --tasks` restricted to it, "
        "calibrated against the gold of the texts that carry it, optimized as its own program."
    )


class HeritageNerTask(_SubTask):
    """Heritage entity extraction alone (``HeritageEntityExtractor``)."""

    name = "heritage-ner"
    subtask = "ner"
    optimized_metric = "entity_f1"
    demo_threshold = 0.8
    description = _subtask_description("HeritageEntityExtractor", "entity extraction")
    inputs = {"text": "the text about a heritage institution"}
    outputs = {"entities": HeritageTask.outputs["entities"]}
    metrics = {
        "entity_f1": "strict entity F1 (same span and type); also precision, recall, partial F1",
    }
    Options: ClassVar[type[BaseModel]] = NerOptions

    def optimization_program(self, options: BaseModel) -> tuple[dspy.Module, Postprocess]:
        """The extractor, its answer anchored in the text (spans of other types set aside)."""
        labels = self.setup(options).labels

        def postprocess(prediction: Any, inputs: dict[str, Any]) -> dict[str, Any]:
            return optimize_text.ner_output(prediction, inputs, labels)

        return HeritageEntityExtractor(labels), postprocess

    def gold_examples(self, path: str | Path, options: BaseModel) -> list[dspy.Example]:
        setup = self.setup(options)
        return optimize_text.ner_examples(path, setup.labels, setup.tags)

    def example_score(
        self, example: dspy.Example, output: dict[str, Any], options: BaseModel
    ) -> MetricResult:
        return optimize_text.ner_score(example, output)


class HeritageClassificationTask(_SubTask):
    """Heritage custodian type classification alone (``HeritageTypeClassifier``)."""

    name = "heritage-classification"
    subtask = "classification"
    optimized_metric = "type_score"
    description = _subtask_description("HeritageTypeClassifier", "custodian type classification")
    inputs = {"text": "the text about a heritage institution"}
    outputs = {"classification": HeritageTask.outputs["classification"]}
    metrics = {
        "type_score": "1 for the gold type, category_credit for a type of its category (optimize)",
        "accuracy": "primary type accuracy; also kappa, macro F1, category accuracy",
    }
    Options: ClassVar[type[BaseModel]] = ClassificationOptions

    def optimization_program(self, options: BaseModel) -> tuple[dspy.Module, Postprocess]:
        return HeritageTypeClassifier(), optimize_text.classification_output_of

    def gold_examples(self, path: str | Path, options: BaseModel) -> list[dspy.Example]:
        return optimize_text.classification_examples(path, self.setup(options).tags)

    def example_score(
        self, example: dspy.Example, output: dict[str, Any], options: BaseModel
    ) -> MetricResult:
        credit = float(getattr(options, "category_credit", 0.5))
        return optimize_text.classification_score(example, output, credit)

    def review(self, options: BaseModel) -> Review:
        return heritage_review(self.setup(options).tasks, labelled=True)

    def gold_rows(
        self, dataset: HeritageRun, labels: dict[str, Any], options: BaseModel
    ) -> list[dict[str, Any]]:
        """The gold entries with people's custodian types (see
        :func:`~jurist.tasks.heritage.figures.type_gold_rows`)."""
        return type_gold_rows(dataset.gold, labels)


class HeritageLinkingTask(_SubTask):
    """Heritage entity linking alone (``HeritageEntityLinker``)."""

    name = "heritage-linking"
    subtask = "linking"
    optimized_metric = "reciprocal_rank"
    description = _subtask_description("HeritageEntityLinker", "entity linking")
    inputs = {"text": HeritageTask.inputs["text"], "mentions": HeritageTask.inputs["mentions"]}
    outputs = {"links": HeritageTask.outputs["links"]}
    metrics = {
        "reciprocal_rank": "1/rank of the gold id (NIL right: 1); also Hits@1, MRR, NIL F1",
    }
    Options: ClassVar[type[BaseModel]] = LinkingOptions

    def optimization_program(self, options: BaseModel) -> tuple[dspy.Module, Postprocess]:
        kb = optimize_linking_qa.knowledge_base(self.setup(options).kb)
        return optimize_linking_qa.linking_program(kb), optimize_linking_qa.linking_output_of

    def gold_examples(self, path: str | Path, options: BaseModel) -> list[dspy.Example]:
        return optimize_linking_qa.linking_examples(path, self.setup(options).tags)

    def example_score(
        self, example: dspy.Example, output: dict[str, Any], options: BaseModel
    ) -> MetricResult:
        kb = optimize_linking_qa.knowledge_base(self.setup(options).kb)
        return optimize_linking_qa.linking_score(example, output, kb)


class HeritageQATask(_SubTask):
    """Heritage question answering alone (``HeritageQuestionAnswerer``)."""

    name = "heritage-qa"
    subtask = "qa"
    optimized_metric = "rouge_l"
    demo_threshold = 0.5
    description = _subtask_description("HeritageQuestionAnswerer", "question answering")
    inputs = {"text": HeritageTask.inputs["text"], "questions": HeritageTask.inputs["questions"]}
    outputs = {"answers": HeritageTask.outputs["answers"]}
    metrics = {"rouge_l": "ROUGE-L F against the gold answer; also faithfulness to the text"}
    Options: ClassVar[type[BaseModel]] = QAOptions

    def optimization_program(self, options: BaseModel) -> tuple[dspy.Module, Postprocess]:
        return HeritageQuestionAnswerer(), optimize_linking_qa.qa_output_of

    def gold_examples(self, path: str | Path, options: BaseModel) -> list[dspy.Example]:
        return optimize_linking_qa.qa_examples(path, self.setup(options).tags)

    def example_score(
        self, example: dspy.Example, output: dict[str, Any], options: BaseModel
    ) -> MetricResult:
        return optimize_linking_qa.qa_score(example, output)
