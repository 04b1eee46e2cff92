"""RGB's answer checks and robustness rates (Chen et al., arXiv 2309.01431), as pure functions.

**Labels.** RGB labels one prediction with a list of ints, one per part of the gold answer:
``1`` the part is in the prediction, ``0`` it is not; or ``[-1]`` when the prediction
rejects (it contains ``信息不足`` or ``insufficient information``). Separately,
``factlabel`` is ``1`` when the prediction contains ``事实性错误`` or ``factual errors``.
For Chinese sets RGB removes every space from the prediction first. :func:`rgb_labels`
does exactly this; :func:`check_answer` is RGB's answer check alone.

**Rates** (each over the scored predictions of one run; a failed item is not scored):

- accuracy ``all_rate = tt / n`` (:func:`accuracy`), where an item counts toward ``tt`` when
  the noise rate is 1 and its first label is -1, or when its labels hold a 1 and no 0; it
  is the noise-robustness accuracy, and at noise rate 1 RGB's rejection rate Rej;
- the strict share of rejections (:func:`rejection_rate`) and a judge's rejection rate
  Rej* (:func:`judged_rate`);
- integration accuracy (:func:`integration_accuracy`);
- error detection ED, and correction CR among detections (:func:`fact_check`); ED* and CR
  from a judge's detections (:func:`judged_fact_check`); a rejection is never a correction
  (:func:`is_correction`);
- the verdicts of RGB's ChatGPT-based evaluation scripts, from the text ChatGPT wrote
  (:func:`chatgpt_rejects` for Rej*, :func:`chatgpt_detects_error` for ED*).

**Improved check** (jurist's, *not* RGB's; never used unless asked for):
:func:`rgb_labels_improved` normalises text (Unicode NFKC, case, punctuation, number
separators, English articles), accepts an answer variant contained in the prediction on
word boundaries or whose tokens all appear in it (``min_overlap``), and finds rejections
and error reports with the tiered keyword lists (:data:`REJECTION_KEYWORDS`,
:data:`ERROR_KEYWORDS`) instead of RGB's two phrases.

**Per-example scores** for tasks' ``example_score`` (optimization) and calibration, each an
:class:`ExampleScore` (``score`` in [0, 1], and ``feedback`` in words for GEPA):
:func:`answer_score` (the model under test against the gold answer), :func:`judgment_score`
(the Rej* or ED* judge against a gold yes/no label), :func:`counterfactual_score`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

AnswerPart = str | Sequence[str]
Answer = str | Sequence[AnswerPart]
AnswerCheck = Literal["original", "improved"]

REJECTION_PHRASES: tuple[str, ...] = ("信息不足", "insufficient information")
"""RGB's rejection test: a prediction containing one of these (case-sensitive) is labelled -1."""

ERROR_PHRASES: tuple[str, ...] = ("事实性错误", "factual errors")
"""RGB's error-detection test: a prediction containing one of these has ``factlabel`` 1."""

REJECTION_KEYWORDS: tuple[tuple[str, ...], ...] = (
    # tier 1: the phrases RGB's prompt asks for
    ("insufficient information", "信息不足"),
    # tier 2: explicit statements that the documents do not answer the question
    (
        "not enough information",
        "cannot answer",
        "can not answer",
        "can't answer",
        "unable to answer",
        "not able to answer",
        "does not contain the answer",
        "do not contain the answer",
        "doesn't contain the answer",
        "don't contain the answer",
        "does not provide",
        "do not provide",
        "no relevant information",
        "no information",
        "not mentioned in the",
        "cannot be determined",
        "can not be determined",
        "cannot determine",
        "unable to determine",
        "insufficient",
        "无法回答",
        "不能回答",
        "无法确定",
        "无法得知",
        "无法判断",
        "无法根据",
        "没有提供",
        "未提供",
        "没有提到",
        "没有提及",
        "未提及",
        "未提到",
        "没有相关信息",
        "没有足够",
        "信息不够",
    ),
    # tier 3: hedges that often, not always, mean a rejection
    (
        "not sure",
        "unclear",
        "unknown",
        "not specified",
        "not stated",
        "no mention",
        "not available",
        "不清楚",
        "不确定",
        "未知",
        "不明确",
        "尚未公布",
        "暂无",
    ),
)
"""Rejection keywords by tier (lower tier, stronger evidence); English matched without case."""

ERROR_KEYWORDS: tuple[tuple[str, ...], ...] = (
    # tier 1: the phrases RGB's prompt asks for
    ("factual errors", "事实性错误"),
    # tier 2: explicit statements that the documents are wrong
    (
        "factual error",
        "factually incorrect",
        "factually inaccurate",
        "incorrect information",
        "inaccurate information",
        "contains errors",
        "contain errors",
        "misinformation",
        "inconsistent with the facts",
        "not consistent with the facts",
        "contradicts the facts",
        "事实错误",
        "错误信息",
        "信息有误",
        "有误",
        "与事实不符",
        "不符合事实",
        "不准确",
        "不正确",
    ),
    # tier 3: weaker words that often, not always, report an error
    (
        "incorrect",
        "inaccurate",
        "inconsistent",
        "contradict",
        "wrong",
        "mistake",
        "错误",
        "矛盾",
        "不一致",
        "不符",
    ),
)
"""Error-report keywords by tier (lower tier, stronger evidence); English matched without case."""

_NEGATED_ERRORS = re.compile(
    r"\b(?:no|not any|without|free of|does not contain|do not contain|don't contain|doesn't contain)"
    r"\s+(?:\w+\s+){0,2}?(?:factual\s+)?errors?\b"
    r"|(?:没有|不存在|并无|无)(?:任何)?(?:事实性)?错误",
    re.IGNORECASE,
)


# ---------------------------------------------------------------------------------------------
# RGB's own checks


def _parts(answer: Answer) -> list[AnswerPart]:
    return [answer] if isinstance(answer, str) else list(answer)


def check_answer(prediction: str, answer: Answer) -> list[int]:
    """RGB's answer check: one label per answer part, 1 if it is in the prediction, else 0.

    The prediction and the answer are lower-cased; a part is a string, which must be a
    substring of the prediction, or a list of variants, of which any one must be.

    >>> check_answer("The capital is Paris", "Paris")
    [1]
    >>> check_answer("The capital is Paris", [["Rome", "paris"], "France"])
    [1, 0]
    """
    text = prediction.lower()
    labels = []
    for part in _parts(answer):
        if isinstance(part, str):
            found = part.lower() in text
        else:
            found = any(variant.lower() in text for variant in part)
        labels.append(int(found))
    return labels


@dataclass(frozen=True)
class RGBLabels:
    """The labels of one prediction, as RGB records them.

    Attributes:
        label: ``[-1]`` for a rejection, else one 0/1 per answer part.
        factlabel: 1 when the prediction reports factual errors, else 0.
        prediction: The prediction the labels were computed on (for Chinese, without spaces).
    """

    label: list[int]
    factlabel: int
    prediction: str


def rgb_labels(prediction: str, answer: Answer, *, language: str) -> RGBLabels:
    """RGB's labelling of a model's answer.

    For ``zh`` every space is removed first. Then label = ``[-1]`` if the text contains
    ``信息不足`` or ``insufficient information`` (case-sensitive), else
    ``check_answer(text, answer)``; factlabel = 1 if it contains ``事实性错误`` or
    ``factual errors`` (case-sensitive), else 0.

    >>> rgb_labels("I can not answer: insufficient information.", "x", language="en").label
    [-1]
    >>> rgb_labels("答案是 12 人", "12人", language="zh").label
    [1]
    """
    text = prediction.replace(" ", "") if language == "zh" else prediction
    rejects = any(phrase in text for phrase in REJECTION_PHRASES)
    label = [-1] if rejects else check_answer(text, answer)
    factlabel = int(any(phrase in text for phrase in ERROR_PHRASES))
    return RGBLabels(label=label, factlabel=factlabel, prediction=text)


# ---------------------------------------------------------------------------------------------
# Tiered keywords


@dataclass(frozen=True)
class KeywordMatch:
    """The strongest keyword found: its tier (1 strongest) and the keyword itself."""

    tier: int
    keyword: str


def _keyword_text(text: str) -> str:
    folded = unicodedata.normalize("NFKC", text).lower()
    # Chinese needs no spaces; English phrases are matched on single spaces.
    return re.sub(r"\s+", " ", re.sub(r"(?<=[\u3000-\u9fff])\s+|\s+(?=[\u3000-\u9fff])", "", folded))


def find_keyword(
    text: str, tiers: Sequence[Sequence[str]], *, max_tier: int | None = None
) -> KeywordMatch | None:
    """The first keyword of the lowest tier (up to ``max_tier``) found in ``text``, or None.

    The text is NFKC-normalised and lower-cased, and spaces next to CJK characters are
    removed, so ``Insufficient  Information`` and ``信息 不足`` match.
    """
    folded = _keyword_text(text)
    for tier, keywords in enumerate(tiers, start=1):
        if max_tier is not None and tier > max_tier:
            break
        for keyword in keywords:
            if _keyword_text(keyword) in folded:
                return KeywordMatch(tier=tier, keyword=keyword)
    return None


def detect_rejection(text: str, *, max_tier: int = 2) -> KeywordMatch | None:
    """The strongest rejection keyword (:data:`REJECTION_KEYWORDS`, both languages) up to ``max_tier``."""
    return find_keyword(text, REJECTION_KEYWORDS, max_tier=max_tier)


def detect_factual_error(text: str, *, max_tier: int = 2) -> KeywordMatch | None:
    """The strongest error-report keyword (:data:`ERROR_KEYWORDS`) up to ``max_tier``.

    Negated reports (``no factual errors``, ``没有错误``) are removed before matching.

    >>> detect_factual_error("There are factual errors in the provided documents.").tier
    1
    >>> detect_factual_error("The documents contain no factual errors.") is None
    True
    """
    return find_keyword(_NEGATED_ERRORS.sub(" ", _keyword_text(text)), ERROR_KEYWORDS, max_tier=max_tier)


# ---------------------------------------------------------------------------------------------
# Improved check (jurist's; opt-in)

_ARTICLES = re.compile(r"\b(?:a|an|the)\b")
_NUMBER_SEPARATOR = re.compile(r"(?<=\d)[,\u00a0\u202f'](?=\d{3}\b)")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_SEGMENT = re.compile(
    r"(?P<cjk>[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+)"
    r"|(?P<word>\d+(?:\.\d+)+|[^\W_\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+)"
)


def normalize_text(text: str, *, language: str) -> str:
    """Text for the improved check: NFKC, lower case, no thousands separators (``1,000`` ->
    ``1000``), punctuation and symbols replaced by spaces (except ``%`` and a decimal point
    between digits), English articles dropped, spaces collapsed; for ``zh`` every space is
    dropped too.

    >>> normalize_text("The U.S. paid $1,000.50!", language="en")
    'u s paid 1000.50'
    >>> normalize_text("J·K·罗琳", language="zh")
    'jk罗琳'
    """
    folded = _NUMBER_SEPARATOR.sub("", unicodedata.normalize("NFKC", text).lower())
    kept = "".join(
        char
        if unicodedata.category(char)[0] not in "PS"
        or char == "%"
        or (
            char == "."
            and 0 < index < len(folded) - 1
            and folded[index - 1].isdigit()
            and folded[index + 1].isdigit()
        )
        else " "
        for index, char in enumerate(folded)
    )
    if language != "zh":
        kept = _ARTICLES.sub(" ", kept)
    kept = " ".join(kept.split())
    return kept.replace(" ", "") if language == "zh" else kept


def _tokens(normalized: str) -> set[str]:
    """Words and numbers; a run of CJK characters gives its character bigrams (one character
    on its own is its own token), so ``1月3日`` and ``3月1日`` share no token."""
    tokens: set[str] = set()
    for match in _SEGMENT.finditer(normalized):
        run = match.group("cjk")
        if run is None:
            tokens.add(match.group("word"))
        elif len(run) == 1:
            tokens.add(run)
        else:
            tokens.update(run[i : i + 2] for i in range(len(run) - 1))
    return tokens


def _variant_found(variant: str, prediction: str, *, language: str, min_overlap: float) -> bool:
    gold = normalize_text(variant, language=language)
    if not gold:  # nothing left after normalisation: fall back to RGB's test
        return variant.lower() in prediction.lower()
    text = normalize_text(prediction, language=language)
    if language == "zh" or _CJK.search(gold):
        contained = gold.replace(" ", "") in text.replace(" ", "")
    else:
        contained = f" {gold} " in f" {text} "
    if contained:
        return True
    wanted = _tokens(gold)
    return bool(wanted) and len(wanted & _tokens(text)) / len(wanted) >= min_overlap


def check_answer_improved(
    prediction: str, answer: Answer, *, language: str, min_overlap: float = 1.0
) -> list[int]:
    """jurist's answer check: one 0/1 label per answer part, like :func:`check_answer`.

    A variant is found when its normalised text (:func:`normalize_text`) is in the
    normalised prediction (on word boundaries, except for Chinese), or when the share of its
    tokens (words and numbers; bigrams of CJK characters) present in the prediction is at least
    ``min_overlap``. A part of variants is found when any variant is.

    >>> check_answer_improved("It was held in Tampa in Florida.", "Tampa, Florida", language="en")
    [1]
    >>> check_answer_improved("About 112 people died.", "12 people", language="en")
    [0]
    """
    labels = []
    for part in _parts(answer):
        variants = [part] if isinstance(part, str) else list(part)
        found = any(
            _variant_found(variant, prediction, language=language, min_overlap=min_overlap)
            for variant in variants
        )
        labels.append(int(found))
    return labels


def rgb_labels_improved(
    prediction: str, answer: Answer, *, language: str, min_overlap: float = 1.0, max_tier: int = 2
) -> RGBLabels:
    """Labels with jurist's improved check: ``[-1]`` when :func:`detect_rejection` finds a
    keyword up to ``max_tier``, else :func:`check_answer_improved`; factlabel from
    :func:`detect_factual_error` up to ``max_tier``. Same shape as :func:`rgb_labels`.
    """
    text = prediction.replace(" ", "") if language == "zh" else prediction
    if detect_rejection(text, max_tier=max_tier) is not None:
        label = [-1]
    else:
        label = check_answer_improved(text, answer, language=language, min_overlap=min_overlap)
    factlabel = int(detect_factual_error(text, max_tier=max_tier) is not None)
    return RGBLabels(label=label, factlabel=factlabel, prediction=text)


def labels_for(
    prediction: str, answer: Answer, *, language: str, check: AnswerCheck = "original"
) -> RGBLabels:
    """:func:`rgb_labels` (``check="original"``) or :func:`rgb_labels_improved` (``"improved"``)."""
    if check == "original":
        return rgb_labels(prediction, answer, language=language)
    if check == "improved":
        return rgb_labels_improved(prediction, answer, language=language)
    raise ValueError(f"answer check must be 'original' or 'improved', got {check!r}")


# ---------------------------------------------------------------------------------------------
# Rates


@dataclass(frozen=True)
class Rate:
    """A count over a total; ``rate`` is ``count / total``, or None when nothing was scored."""

    count: int
    total: int

    @property
    def rate(self) -> float | None:
        return self.count / self.total if self.total else None


def is_correct(label: Sequence[int], noise_rate: float) -> bool:
    """Whether one prediction counts toward RGB's ``tt``.

    True when ``noise_rate == 1`` and ``label[0] == -1`` (a rejection where no passage
    holds the answer), or else when ``1 in label and 0 not in label``. An empty label list
    counts as neither.
    """
    if noise_rate == 1 and label and label[0] == -1:
        return True
    return 0 not in label and 1 in label


def accuracy(labels: Sequence[Sequence[int]], noise_rate: float) -> Rate:
    """RGB's ``all_rate`` for one run at one noise rate.

    all_rate = tt / n, with tt = |{i : is_correct(label_i, noise_rate)}| (see
    :func:`is_correct`) and n the number of scored predictions.

    >>> accuracy([[1], [0], [1, 1], [1, 0]], 0.4).rate
    0.5
    >>> accuracy([[-1], [0], [-1]], 1.0).count
    2

    At noise rate 1 a prediction holding the answer (from the model's own knowledge) counts
    too: ``accuracy([[1]], 1.0).count == 1``. RGB reports this all_rate as Rej.
    """
    return Rate(sum(is_correct(label, noise_rate) for label in labels), len(labels))


def rejection_rate(labels: Sequence[Sequence[int]]) -> Rate:
    """The share of predictions labelled as rejections.

    rate = |{i : label_i[0] = -1}| / n. RGB's Rej is :func:`accuracy` at noise rate 1, which
    also counts predictions that hold the answer; this is the strict share of rejections.
    """
    return Rate(sum(bool(label) and label[0] == -1 for label in labels), len(labels))


def judged_rate(flags: Sequence[bool]) -> Rate:
    """A judge's rate, e.g. Rej* (answers judged to reject) or ED* (judged to report errors).

    rate = |{i : flag_i}| / n over the predictions the judge scored.
    """
    return Rate(sum(bool(flag) for flag in flags), len(flags))


def integration_accuracy(labels: Sequence[Sequence[int]]) -> Rate:
    """Information-integration accuracy: the share of predictions holding every answer part.

    accuracy = |{i : 1 ∈ label_i and 0 ∉ label_i}| / n (RGB's all_rate below noise rate 1).
    """
    return Rate(sum(0 not in label and 1 in label for label in labels), len(labels))


def is_correction(label: Sequence[int]) -> bool:
    """Whether an answer gives the correct answer, as RGB's correction counts it.

    correction = 1 ∈ label and 0 ∉ label: every part of the gold answer is in the answer.
    A rejection (label ``[-1]``) gives no answer, so it is never a correction.

    >>> is_correction([1, 1]), is_correction([1, 0]), is_correction([-1])
    (True, False, False)
    """
    return 0 not in label and 1 in label


@dataclass(frozen=True)
class FactCheck:
    """Counterfactual robustness of one run: detections and corrections.

    Attributes:
        fact_tt: Predictions that report factual errors (detections).
        correct_tt: Of those, corrections: labels with a 1 and no 0 (:func:`is_correction`).
        nums: Scored predictions.
        detected_rejections: Detections whose label is the rejection ``[-1]``; never
            corrections. (RGB's ``evalue.py`` tests ``0 not in label`` alone, which lets these
            through: its ``correct_tt`` is ``correct_tt + detected_rejections``.)
    """

    fact_tt: int
    correct_tt: int
    nums: int
    detected_rejections: int = 0

    @property
    def fact_check_rate(self) -> float | None:
        """ED = fact_tt / nums (None when nothing was scored)."""
        return self.fact_tt / self.nums if self.nums else None

    @property
    def correct_rate(self) -> float:
        """CR = correct_tt / fact_tt, and 0 when nothing was detected (RGB's convention)."""
        return self.correct_tt / self.fact_tt if self.fact_tt else 0.0


def fact_check(labels: Sequence[Sequence[int]], factlabels: Sequence[int]) -> FactCheck:
    """RGB's error detection rate (ED) and error correction rate (CR).

    RGB (arXiv 2309.01431, counterfactual robustness): ED is the share of answers that
    detect the factual errors in the documents; CR the share of those detections that then
    give the correct answer. Over the n scored answers::

        fact_tt    = |{i : factlabel_i = 1}|
        correct_tt = |{i : factlabel_i = 1 and 1 ∈ label_i and 0 ∉ label_i}|
        ED = fact_tt / n
        CR = correct_tt / fact_tt      (0 when fact_tt = 0, as RGB writes it)

    The correction test is RGB's own in ``fact_evalue.py`` (``0 not in label and 1 in
    label``). A rejection (label ``[-1]``) gives no answer and is **never a correction**;
    such detections are counted in ``detected_rejections``. RGB's keyword ``evalue.py``
    tests ``0 not in label`` only and so counts them: its ``correct_tt`` equals
    ``correct_tt + detected_rejections`` here.

    >>> result = fact_check([[1], [0], [1], [-1]], [1, 1, 0, 1])
    >>> (result.fact_tt, result.correct_tt, result.detected_rejections)
    (3, 1, 1)
    >>> (result.fact_check_rate, round(result.correct_rate, 4))
    (0.75, 0.3333)
    """
    if len(labels) != len(factlabels):
        raise ValueError(f"{len(labels)} label lists but {len(factlabels)} factlabels")
    fact_tt = correct_tt = rejections = 0
    for label, factlabel in zip(labels, factlabels, strict=True):
        if factlabel == 1:
            fact_tt += 1
            if is_correction(label):
                correct_tt += 1
            elif label[:1] == [-1]:
                rejections += 1
    return FactCheck(fact_tt=fact_tt, correct_tt=correct_tt, nums=len(labels), detected_rejections=rejections)


def judged_fact_check(labels: Sequence[Sequence[int]], detected: Sequence[bool]) -> FactCheck:
    """ED* and CR: :func:`fact_check` with a judge's detections in place of RGB's keywords.

    RGB's ``fact_evalue.py`` (ChatGPT as the judge)::

        fact_tt    = |{i : detected_i}|
        correct_tt = |{i : detected_i and 1 ∈ label_i and 0 ∉ label_i}|
        ED* = fact_tt / n,  CR = correct_tt / fact_tt  (0 when fact_tt = 0)

    A rejection is never a correction here either.
    """
    return fact_check(labels, [int(bool(flag)) for flag in detected])


CHATGPT_REJECTION_MARK = "not addressed"
"""RGB's ``reject_evalue.py`` counts a ChatGPT evaluation as a rejection when it contains this."""

CHATGPT_DETECTION_MARKS: tuple[str, ...] = ("has identified", "Yes")
"""RGB's ``fact_evalue.py`` counts a ChatGPT evaluation as a detection when it contains one of these."""


def chatgpt_rejects(evaluation: str) -> bool:
    """Whether RGB's ChatGPT rejection evaluation (``reject_evalue.py``) says the answer rejects.

    rejects = ``"not addressed"`` ⊂ evaluation (case-sensitive), RGB's test on ChatGPT's
    "No, the question is not addressed by the documents."

    >>> chatgpt_rejects("No, the question is not addressed by the documents.")
    True
    >>> chatgpt_rejects("Yes, the question is addressed by the documents.")
    False
    """
    return CHATGPT_REJECTION_MARK in evaluation


def chatgpt_detects_error(evaluation: str) -> bool:
    """Whether RGB's ChatGPT fact-checking evaluation (``fact_evalue.py``) says the answer
    detects the factual errors.

    detects = ``"has identified"`` ⊂ evaluation or ``"Yes"`` ⊂ evaluation (case-sensitive),
    RGB's test on ChatGPT's "Yes, the model has identified the factual errors."

    >>> chatgpt_detects_error("Yes, the model has identified the factual errors.")
    True
    >>> chatgpt_detects_error("NO, the model fail to identify the factual errors.")
    False
    """
    return any(mark in evaluation for mark in CHATGPT_DETECTION_MARKS)


# ---------------------------------------------------------------------------------------------
# Per-example scores (for optimizer and calibration adapters)


@dataclass(frozen=True)
class ExampleScore:
    """The score of one example, in [0, 1], and what went right or wrong in words.

    A task's ``example_score`` uses ``score`` as the optimization target and ``feedback`` as the
    textual feedback (GEPA's reflection step reads it).
    """

    score: float
    feedback: str


def _part_text(part: AnswerPart) -> str:
    return repr(part) if isinstance(part, str) else " or ".join(repr(variant) for variant in part)


def answer_score(
    prediction: str,
    answer: Answer,
    *,
    language: str = "en",
    noise_rate: float = 0.0,
    check: AnswerCheck = "original",
) -> ExampleScore:
    """Whether one answer of the model under test counts toward RGB's ``tt``.

    score = 1[is_correct(labels(prediction, answer), noise_rate)], with the labels of
    :func:`rgb_labels` (or :func:`rgb_labels_improved` for ``check="improved"``): below noise
    rate 1 the answer must hold every answer part and not reject; at noise rate 1 it must
    reject (or hold the answer). The target for a responder program.

    >>> answer_score("It was Paris.", [["Paris", "paris, france"], "1889"]).feedback
    "misses answer part(s): '1889'"
    """
    labels = labels_for(prediction, answer, language=language, check=check)
    score = float(is_correct(labels.label, noise_rate))
    rejected = labels.label[:1] == [-1]
    if noise_rate == 1:
        if rejected:
            feedback = "rejects, as it should: no passage holds the answer"
        elif score:
            feedback = "gives the right answer although no passage holds it (counted, as in RGB)"
        else:
            feedback = "should reject: no passage holds the answer, but it answers"
    elif rejected:
        feedback = (
            f"rejects although the passages hold the answer ({', '.join(map(_part_text, _parts(answer)))})"
        )
    elif score:
        feedback = "holds every part of the answer"
    else:
        missing = [
            _part_text(part) for part, found in zip(_parts(answer), labels.label, strict=False) if not found
        ]
        feedback = f"misses answer part(s): {', '.join(missing)}"
    return ExampleScore(score=score, feedback=feedback)


def judgment_score(predicted: bool, gold: bool, *, kind: str = "rejection") -> ExampleScore:
    """Whether a yes/no judgment of the Rej* or ED* judge agrees with its gold label.

    score = 1[predicted = gold]; its mean over a dataset is the judge's accuracy. ``kind``
    (``rejection`` or ``error_detection``) only words the feedback.

    >>> judgment_score(True, False).feedback
    'wrong: judged that the answer rejects, but it does not'
    """
    if kind == "rejection":
        does, does_not = "rejects", "does not reject"
    else:
        does, does_not = (
            "reports factual errors in the documents",
            "does not report factual errors in the documents",
        )
    said = f"the answer {does if predicted else does_not}"
    if bool(predicted) == bool(gold):
        return ExampleScore(score=1.0, feedback=f"right: {said}")
    truth = "it does not" if predicted else "it does"
    return ExampleScore(score=0.0, feedback=f"wrong: judged that {said}, but {truth}")


def counterfactual_score(prediction: str, answer: Answer, *, language: str = "en") -> ExampleScore:
    """Whether an answer on counterfactual passages reports the error and corrects it.

    score = 1[factlabel = 1 and 1 ∈ label and 0 ∉ label] with :func:`rgb_labels`: the item
    counts toward both ED and CR (:func:`fact_check`). A rejection is never a correction.
    """
    labels = rgb_labels(prediction, answer, language=language)
    if labels.factlabel != 1:
        return ExampleScore(
            0.0, "does not report the factual errors in the documents (RGB's phrase is missing)"
        )
    if labels.label[:1] == [-1]:
        return ExampleScore(
            0.0, "reports the factual errors but rejects instead of giving the correct answer"
        )
    if not is_correction(labels.label):
        return ExampleScore(0.0, "reports the factual errors but does not give the correct answer")
    return ExampleScore(1.0, "reports the factual errors and gives the correct answer")
