"""Demonstrations that show every answerability label, each one right (``compile.demos_by_label``).

``dspy.BootstrapFewShot`` keeps the traces of the first trainset runs the objective scores right, in the trainset's
order. On MTRAG-UN that is mostly ANSWERABLE tasks, and "right" is the outcome, not each step: a run whose assessment
said PARTIAL, which the one-part check then answered, counts. The 2026-11-26 bootstrap compile kept exactly such a run
(gold ANSWERABLE) as its second ``assess`` demonstration. Taking the trainset in turn by gold label, and keeping a run
only when every answerability label its steps wrote is the gold one, gives demonstrations of each label that the
program reaches, each one labelled as the data labels it.

Measured with the offline LMs (the results log (bench/RESULTS.md in git history), "Demonstrations by label"): no UNDERSPECIFIED run passed, the
three demos were ANSWERABLE, UNANSWERABLE, ANSWERABLE, and the demo set's outcome fell from 0.808 to 0.577.

``scored_with_demos`` serves the benches that score a step without and with drawn demonstrations.
"""

from __future__ import annotations

from askfirst.programs.common.answerability import LABELS


def interleaved_by_label(examples: list) -> list:
    """``examples`` taken in turn by gold ``answerability`` (one of each label, then again), labels in the order
    they first appear and each label's examples in their own order; an example without a label is a group of its own.
    """
    return interleaved(examples, key=lambda example: str(example.get("answerability")))


def interleaved(examples: list, *, key) -> list:
    """``examples`` taken in turn by ``key(example)`` (one of each group, then again), groups in the order they first
    appear and each group's examples in their own order."""
    groups: dict[str, list] = {}
    for example in examples:
        groups.setdefault(key(example), []).append(example)
    longest = max((len(group) for group in groups.values()), default=0)
    return [group[i] for i in range(longest) for group in groups.values() if i < len(group)]


def wrong_labels(gold, trace: list) -> list[str]:
    """The answerability labels the steps in ``trace`` wrote that differ from ``gold``'s; none when ``gold`` has no
    answerability label to compare with. Other steps' ``label`` fields (the referent check's SPECIFIC /
    UNDERSPECIFIED) are a different vocabulary and are not compared."""
    expected = gold.get("answerability")
    if expected not in LABELS:
        return []
    written = (outputs.get("label") for _, _, outputs in trace)
    return [label for label in written if label in LABELS and label != expected]


def labels_agree(metric):
    """``metric`` (a float metric) that scores 0 a bootstrapping run (one with a ``trace``) in which a step wrote
    a wrong answerability label, so its traces are never kept as demonstrations; without a trace, ``metric``."""
    def checked(gold, pred, trace=None) -> float:
        score = metric(gold, pred, trace)
        return 0.0 if trace is not None and wrong_labels(gold, trace) else score

    checked.__name__ = f"{metric.__name__}+labels"
    return checked


def scored_with_demos(predictor, draws: dict[str, list], score) -> dict[str, list]:
    """``score(name)`` for each named draw of ``draws``, with that draw's demonstrations set on ``predictor`` (an empty
    list: none); the predictor's own demonstrations are restored afterwards, also when a score raises.
    """
    own = list(predictor.demos)
    results: dict[str, list] = {}
    try:
        for name, demos in draws.items():
            predictor.demos = list(demos)
            results[name] = score(name)
    finally:
        predictor.demos = own
    return results
