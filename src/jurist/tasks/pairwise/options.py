"""The options of the pairwise tasks, named after the flags of the former pairwise commands."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["PairwiseGoldOptions", "PairwiseOptions"]

_NUM_OPTIONS = "2, 3 or 4 options (SubEval's wording)"
_RESAMPLES = "Bootstrap resamples for the 95% intervals."
_SEED = "Seed of the bootstrap."
_CHOICE_RULE = (
    "How the letter after 'Choice: ' in a judge's text is read: subeval (SubEval's published "
    "rule, the first character when it is A-D, even one that begins a word: 'Choice: Definitely A' "
    "is D) or strict (a standalone option letter only). Either way, letters that begin a word are "
    "listed, and the other rule's figures are shown beside when the two differ."
)


class PairwiseOptions(BaseModel):
    """Options of ``pairwise``, named after the flags of the former ``jurist judge/score pairwise``.

    Only ``num_options`` is a setting of calibration; the others are excluded from
    ``model_dump()`` so they never stand in for calibration's own settings (e.g. its seed).
    """

    model_config = ConfigDict(extra="forbid")

    num_options: int | None = Field(
        None,
        ge=2,
        le=4,
        description=f"{_NUM_OPTIONS}; default 2, except when scoring a record file: from its name, else 4.",
    )
    reference_model: str | None = Field(
        None,
        exclude=True,
        description="SubEval tables: compare every model with this one (default: all pairs); "
        "when scoring: the reference model (default: inferred from the records).",
    )
    compare: list[str] | None = Field(
        None, exclude=True, description="SubEval tables: a model to compare (repeatable; default: all)."
    )
    fill_contents: list[str] | None = Field(
        None,
        exclude=True,
        description="SubEval tables: a column whose cells name files to read (repeatable).",
    )
    map: list[str] | None = Field(
        None,
        exclude=True,
        description="Pairs files: read a column as a shape's column, target=column (repeatable), "
        "e.g. response_a=answer_left or label=pref.",
    )
    split_vote: Literal["tie", "exclude"] = Field(
        "tie",
        exclude=True,
        description="Pairs files with several annotators: gold when no label has a majority "
        "(tie, or exclude the pair from the agreement).",
    )
    judge_column: str | None = Field(
        None,
        exclude=True,
        description="Scoring: the column with the judge's answers (default: the one non-SubEval column).",
    )
    choice_rule: Literal["subeval", "strict"] = Field("subeval", exclude=True, description=_CHOICE_RULE)
    resamples: int = Field(1000, ge=0, exclude=True, description=_RESAMPLES)
    seed: int = Field(0, exclude=True, description=_SEED)
    length_control: Path | None = Field(
        None,
        exclude=True,
        description="Scoring AlpacaEval annotations: alpaca_eval's df_gamed.csv (the gamed baselines' "
        "annotations and instruction difficulty); gives the length-controlled win rate.",
    )
    annotator: str | None = Field(
        None,
        exclude=True,
        description="Scoring an AlpacaEval results folder: the annotator whose files make the "
        "leaderboard (default: the only one).",
    )
    out: Path | None = Field(
        None,
        exclude=True,
        description="Scoring: also write SubEval's record table, log, tables and summary (or the agreement "
        "tables) into this directory.",
        json_schema_extra={"aliases": ["-o"]},
    )


class PairwiseGoldOptions(BaseModel):
    """Options of ``pairwise-gold``, named after the flags of the former ``jurist score
    pairwise-gold`` (its pairs files are now judged by ``jurist judge pairwise-gold``)."""

    model_config = ConfigDict(extra="forbid")

    num_options: int = Field(2, ge=2, le=4, description="Options the baseline chooses from.")
    map: list[str] | None = Field(
        None,
        description="Pairs files: read a column as a shape's column, target=column (repeatable), "
        "e.g. response_a=answer_left or label=pref.",
    )
    split_vote: Literal["tie", "exclude"] = Field(
        "tie",
        description="Pairs files with several annotators: gold when no label has a majority "
        "(tie, or exclude the pair from the agreement).",
    )
    choice_rule: Literal["subeval", "strict"] = Field("subeval", description=_CHOICE_RULE)
    resamples: int = Field(1000, ge=0, description=_RESAMPLES)
    seed: int = Field(0, description=_SEED)
    out: Path | None = Field(
        None,
        description="Write the agreement tables into this directory.",
        json_schema_extra={"aliases": ["-o"]},
    )
