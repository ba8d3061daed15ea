"""The judges a config switches on (``eval.hm``, ``eval.ambiguity``, ``eval.short_span``), run over a finished evaluation.

``eval`` and every ``ablate`` cell share this, so a cell of an ablation is scored exactly as ``eval`` scores it.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from askfirst.config import AskFirstConfig
from askfirst.run_dir import write_atomic

HM_NOTE = ("judging replies (MTRAGEval: IDK, clarification, faithfulness, rating; RB_agg with eval.rb_agg_similarity standing in "
           "for BERTScore; HM under the current and the 2026-01 conditioning)")
AMBIGUITY_NOTE = ("scoring ambiguous questions on the judge LM: Disambig-F1 (its short answers extracted by the LM, standing in "
                  "for an extractive QA model), 0-5 answer ratings, asks-for-info")
SPAN_NOTE = "extracting each answering reply's short answer span on the judge LM for SQuAD's EM and F1"


def judge_result(cfg: AskFirstConfig, examples: list, result, *, embedder, passage_text: dict[str, str],
                 say: Callable[[str], None] = lambda _: None) -> dict[str, float]:
    """Add the switched-on judges' scores to ``result.summary`` (and rewrite ``metrics.json``).

    Args:
        result: An ``EvalResult`` whose records are all answered.
        passage_text: Passage id → text, for the judges that read the retrieved passages.
        say: Where to report what is being judged.

    Returns:
        The judged scores as flat MLflow metrics (``HM``, ``ambiguity.str_em``, ``span.span_em``, …); empty when no judge is on.
    """
    from askfirst.evaluation.runner import ambiguity_scores, judge_records
    from askfirst.programs.factory import build_ambiguity_judges, build_extractor, build_judges

    flat: dict[str, float] = {}
    if cfg.eval.hm:
        say(HM_NOTE)
        result.summary["mtrag"] = judge_records(examples, result.records, build_judges(cfg, embedder), passage_text,
                                                run_dir=result.run_dir)
        flat |= result.summary["mtrag"]
    if cfg.eval.ambiguity:
        say(AMBIGUITY_NOTE)
        result.summary["ambiguity"] = ambiguity_scores(examples, result.records, extract=build_extractor(cfg),
                                                       judges=build_ambiguity_judges(cfg), passage_text=passage_text,
                                                       run_dir=result.run_dir)
        flat |= {f"ambiguity.{k}": v for k, v in result.summary["ambiguity"].items()}
    if cfg.eval.short_span:
        from askfirst.evaluation.span_scores import span_scores

        say(SPAN_NOTE)
        result.summary["span"] = span_scores(examples, result.records, extract=build_extractor(cfg), run_dir=result.run_dir)
        flat |= {f"span.{k}": v for k, v in result.summary["span"].items()}
    if flat:  # metrics.json was written before judging
        write_atomic(result.run_dir / "metrics.json", json.dumps(result.summary, indent=2))
    return {k: v for k, v in flat.items() if isinstance(v, int | float)}
