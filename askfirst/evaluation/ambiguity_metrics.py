"""Metrics for ambiguous questions (ASQA-style): STR-EM and Disambig-F1.

- STR-EM: the share of gold interpretations whose short answer (any alias) occurs in the long answer,
  after SQuAD normalisation.
- Disambig-F1: for each gold clarified question, a short answer is extracted from the long answer (by
  ``extract``, e.g. a DSPy module on the configured LM where no frozen extractive QA model is available
  offline) and scored by token F1 against that interpretation's aliases; the mean over interpretations.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from askfirst.evaluation.answer_metrics import best_token_f1, normalize_answer


def exact_presence(aliases: Sequence[str], long_answer: str) -> bool:
    """ASQA's ``exact_presence``: some normalised alias is a substring of the normalised answer (not only as
    whole tokens: "85" is present in "EUR 850", as ASQA's scorer has it)."""
    answer = normalize_answer(long_answer)
    return any(normalize_answer(a) in answer for a in aliases if normalize_answer(a))


def str_em(long_answer: str, alias_sets: Sequence[Sequence[str]]) -> float:
    """STR-EM: the share of readings with some alias present in the long answer (ASQA's definition)."""
    if not alias_sets:
        return 0.0
    return sum(exact_presence(aliases, long_answer) for aliases in alias_sets) / len(alias_sets)


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
