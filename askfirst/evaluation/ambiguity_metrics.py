"""Metrics for ambiguous questions (ASQA-style): STR-EM and Disambig-F1.

- STR-EM: the share of gold interpretations whose short answer (any alias) occurs in the long answer's first line
  (citation markers removed), after SQuAD normalisation, as ALCE's scorer computes it.
- Disambig-F1: for each gold clarified question, a short answer is extracted from the long answer (by
  ``extract``, e.g. a DSPy module on the configured LM where no frozen extractive QA model is available
  offline) and scored by token F1 against that interpretation's aliases; the mean over interpretations.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from askfirst.evaluation.answer_metrics import best_token_f1, normalize_answer


_CITATION = re.compile(r"\s*\[[^\[\]\s]+\]")  # "[1]" as ALCE writes them, "[doc-id]" as the programs do


def alce_output(long_answer: str) -> str:
    """The answer as ALCE's scorer reads it: stripped, cut at the first newline, citation markers removed."""
    first = long_answer.strip().split("\n")[0]
    return _CITATION.sub("", first)


def exact_presence(aliases: Sequence[str], long_answer: str) -> bool:
    """ALCE's (and ASQA's) ``exact_presence``: some normalised alias is a substring of the normalised answer (not only
    as whole tokens: "85" is present in "EUR 850"); an alias that normalises to nothing is present in any answer."""
    answer = normalize_answer(long_answer)
    return any(normalize_answer(a) in answer for a in aliases)


def str_em(long_answer: str, alias_sets: Sequence[Sequence[str]]) -> float:
    """STR-EM as ALCE computes it: the share of readings with some alias present in the answer's first line, its
    citation markers removed."""
    if not alias_sets:
        return 0.0
    output = alce_output(long_answer)
    return sum(exact_presence(aliases, output) for aliases in alias_sets) / len(alias_sets)


def disambig_f1(long_answer: str, qa_pairs: Sequence[tuple[str, Sequence[str]]], extract: Callable[[str, str], str]) -> float:
    """``qa_pairs``: ``(clarified question, aliases)``; ``extract(question, long_answer) -> short answer``."""
    if not qa_pairs:
        return 0.0
    return sum(best_token_f1(extract(q, long_answer), aliases) for q, aliases in qa_pairs) / len(qa_pairs)


def lm_extractor(predictor) -> Callable[[str, str], str]:
    """Disambig-F1's extractive step as a DSPy module (``dspy.Predict(ExtractShortAnswer)``), named as such in reports."""
    def extract(question: str, long_answer: str) -> str:
        return predictor(question=question, long_answer=long_answer).short_answer

    return extract
