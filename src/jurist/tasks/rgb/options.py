"""The options of the ``rgb`` task (the flags of ``jurist rgb run`` and ``jurist score rgb``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from jurist.datasets.rgb.loader import LANGUAGES, RGB_SEED, Duplicates, Language
from jurist.judges.config import JudgeConfig, load_config
from jurist.metrics.rgb import AnswerCheck
from jurist.tasks.rgb.judges import INTEGRATION_NOISE_RATES, NOISE_RATES, PASSAGE_NUM, SETS, SetName
from jurist.tasks.rgb.predictions import Judgment

__all__ = ["RGBOptions"]

Rate = Annotated[float, Field(ge=0.0, le=1.0)]


class RGBOptions(BaseModel):
    """The options of the ``rgb`` task: how the suite runs (``judge``) and how prediction files
    are scored (``score``). The model under test is the judge config of the command."""

    model_config = ConfigDict(extra="forbid")

    judge_config: Path | JudgeConfig | None = Field(
        None, description="Config YAML (or config) of the Rej*/ED* judge (default: keyword judges)."
    )
    judge_model: str | None = Field(
        None, description="LiteLLM model of the Rej*/ED* judge (default: keyword judges)."
    )
    judge_program: list[Path] = Field(
        [],
        description="Compiled Rej*/ED* judges from `jurist optimize rgb-rejection|rgb-error-detection` "
        "(each runs the judge it was compiled for, with its own config unless a judge model is given).",
    )
    sets: list[SetName] = Field(list(SETS), min_length=1, description="Sets to run.")
    languages: list[Language] = Field(list(LANGUAGES), min_length=1, description="Languages to run.")
    noise_rates: list[Rate] = Field(
        list(NOISE_RATES), min_length=1, description="Noise-robustness noise rates."
    )
    integration_noise_rates: list[Rate] = Field(
        list(INTEGRATION_NOISE_RATES),
        min_length=1,
        description="Information-integration noise rates.",
    )
    passage_num: int = Field(PASSAGE_NUM, ge=0, description="Passages per question.")
    counterfactual_noise_rate: float = Field(
        0.0, ge=0.0, le=1.0, description="Noise rate of the counterfactual run."
    )
    correct_rate: float = Field(
        0.0, ge=0.0, le=1.0, description="Share of correct passages in the counterfactual run."
    )
    closed_book: bool = Field(
        True, description="Also ask the counterfactual questions without passages (the paper's Acc)."
    )
    prefer: Literal["refine", "plain"] = Field(
        "refine", description="refine or plain: which file to use when {lang}_refine and {lang} both exist."
    )
    instructions: Path | None = Field(
        None, description="Prompts YAML shaped like RGB's config/instruction.yaml."
    )
    seed: int = Field(RGB_SEED, description="Seed re-set before preparing each instance.")
    limit: int | None = Field(None, ge=1, description="Only the first N rows of each file.")
    answer_check: AnswerCheck = Field(
        "original", description="original (RGB's) or improved (adds jurist's figures next to RGB's)."
    )
    chart: bool = Field(True, description="Write accuracy_vs_noise.png (needs matplotlib).")
    recheck: AnswerCheck | None = Field(
        None,
        description="Scoring prediction files: recompute labels from the predictions, original "
        "(RGB's check) or improved.",
    )
    language: Language | None = Field(
        None,
        description="Scoring prediction files: en or zh for --recheck (default: the lines' 'language' "
        "field, else the script of the questions; never the file name).",
    )
    duplicates: Duplicates = Field(
        "error",
        description="Scoring prediction files: an id used twice is an error (error), or counted once, "
        "the first line, with a warning (first).",
    )
    judgment: Judgment | None = Field(
        None,
        description="Scoring files judged by RGB's ChatGPT scripts ('evaluation' on each line): "
        "rejection (reject_evalue.py) or error-detection (fact_evalue.py); default: from ChatGPT's wording.",
    )

    def judge_lm(self) -> JudgeConfig | None:
        """The config of the Rej*/ED* judges (``None``: the keyword judges)."""
        if self.judge_config is None and self.judge_model is None:
            return None
        if isinstance(self.judge_config, JudgeConfig):
            if self.judge_model is None:
                return self.judge_config
            return self.judge_config.model_copy(update={"model": self.judge_model})
        return load_config(self.judge_config, {"model": self.judge_model})
