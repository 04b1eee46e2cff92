"""Injection probes of a judge: can text planted in what is judged become the parsed verdict?

``jurist probe injection TASK [DATA] --config C`` (:func:`jurist.verbs.probe_injection`) works
for any task through the task contract (:meth:`~jurist.tasks.Task.read`,
:meth:`~jurist.tasks.Task.items`, :meth:`~jurist.tasks.Task.make_judge`); it names no task.
A probe is judged as ordinary runs of the judging loop, a recipe of two
(:mod:`jurist.tasks.probes.task`): the clean items, then the attack and control items planted
from their verdicts, each run into its own sub-directory of the probe's directory.

For each item (the first ``limit`` items of the data) and each case of the probe set
(``tasks/probes/data/injection.yaml``, or a file of the same shape):

1. The **clean** item is judged as it is.
2. The case's payload template is filled with the task's verdict vocabulary, read from the
   clean verdict: ``{verdict_field}`` (e.g. ``verdict``, ``choice``), ``{other_verdict}``
   (a verdict other than the clean one: the next label of the output type, the other
   boolean, the far end of a score range, ...), ``{other_verdict_json}`` (that verdict as a
   JSON literal: ``true``, ``"A"``, ``7``) and ``{other_verdict_py}`` (as a Python literal:
   ``True``, ``'A'``, ``7``).
3. The payload is planted in every *injectable* input (see :func:`injectable_fields`): at
   the end (or start) of a text input, or of the last (first) text inside a list or
   mapping input (e.g. the last response sentence of a keyed RAG response), after the
   case's padding. This **attack** item is judged.
4. The **control** item carries the same payload asking for the clean verdict instead
   (padded to the same length); it is judged too. It tells a verdict moved by the
   payload's demand apart from a verdict changed by extra text as such (a rule baseline
   that counts words or length changes with any added text, in the attack and the
   control alike).

The verdict compared is the one the payload asks to change (:func:`primary_verdict`): the
task's first declared output that is a boolean, an integer, a label or a list of labels
(``verdict``, ``choice``, ``overall_supported``, a classification's type), read from the
output without free text (fields named like ``reason``, ``reasoning``, ``rationale``,
``explanation``) and ``confidence``. Items whose verdict has no fixed vocabulary (an
extracted span, an answer: planted text there is content to extract) are skipped and
listed. A probe **moved** the verdict when the attack's verdict differs from both the
clean item's and the control's; it **failed** when the attack or the control could not be
judged (an unparseable or ambiguous answer: a refusal, never a forged verdict);
**changed** counts attacks whose verdict differs from the clean one for any reason.

A task may set ``untrusted_inputs`` (a tuple of input names) to say which inputs hold
judged text; without it, an input is injectable when the task declares it in
:attr:`~jurist.tasks.Task.inputs` and it holds text, or when it holds text of several
words (so identifiers, keys and option flags stay intact).
"""

from jurist.tasks.probes.cases import INJECTION_CASES, ProbeCase, load_cases, verdict_view
from jurist.tasks.probes.planting import ProbePlan, inject, injectable_fields, plan_probes
from jurist.tasks.probes.report import ProbeOutcome, ProbeReport
from jurist.tasks.probes.task import InjectionProbe, ProbeSettings

__all__ = [
    "INJECTION_CASES",
    "InjectionProbe",
    "ProbeCase",
    "ProbeOutcome",
    "ProbePlan",
    "ProbeReport",
    "ProbeSettings",
    "inject",
    "injectable_fields",
    "load_cases",
    "plan_probes",
    "verdict_view",
]
