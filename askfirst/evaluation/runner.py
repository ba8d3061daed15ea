"""Run a program over a question set: per-question outputs written as they finish, then scored and logged."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import dspy

from askfirst.datasets.jsonl import append_record, each_resumably, read_checkpoint, read_jsonl
from askfirst.lm.call_counter import counting_lm_calls
from askfirst.programs.base import Reply
from askfirst.run_dir import write_atomic
from askfirst.evaluation.scoring import aggregate, per_collection, score_prediction

logger = logging.getLogger(__name__)
PREDICTIONS_FILE = "predictions.jsonl"
AMBIGUITY_FILE = "ambiguity.jsonl"  # per-question rows of ambiguity_scores


def prediction_record(example, pred: dspy.Prediction, *, seconds: float, lm_calls: int) -> dict:
    """The JSON-able record of one answered question (what ``predictions.jsonl`` holds): the program's
    :class:`~askfirst.programs.base.Reply` record, with the question, its id and what it cost."""
    record = Reply.of(pred).to_record()
    return {"id": example.id, "question": example.conversation[-1]["content"][:2000]} | record | {
        "seconds": round(seconds, 3), "lm_calls": lm_calls}


def failure_record(example, error: Exception, *, seconds: float) -> dict:
    return {"id": example.id, "question": example.conversation[-1]["content"][:2000], "route": "error",
            "answer": f"(failed: {type(error).__name__}: {error})", "citations": [], "retrieved": [], "retrieved_docs": [],
            "options": [], "warnings": [str(error)], "seconds": round(seconds, 3), "lm_calls": 0}


def read_finished(path: Path) -> dict[str, dict]:
    """Records already written by an earlier (possibly interrupted) run of the same folder."""
    return read_checkpoint(path, key="id")


def read_scores(run_dir: Path) -> list[dict]:
    """The per-question scores :func:`run_eval` wrote to the run folder's ``scores.jsonl``, in its order."""
    return [record for _, record in read_jsonl(run_dir / "scores.jsonl")]


@dataclass
class EvalResult:
    records: list[dict]
    scores: list[dict]
    summary: dict
    run_dir: Path


def token_usage(pred) -> dict:
    """Input and output tokens of a reply's LM calls (DSPy's usage tracking), with litellm's cost where it knows
    the model (``None`` for local models and unknown ones)."""
    by_model = pred.get_lm_usage() or {} if hasattr(pred, "get_lm_usage") else {}
    total_in = sum(u.get("prompt_tokens") or 0 for u in by_model.values())
    total_out = sum(u.get("completion_tokens") or 0 for u in by_model.values())
    cost = 0.0
    for model, usage in by_model.items():
        if model.startswith("local/"):  # the in-process llama.cpp model has no price
            cost = None
            break
        try:
            import litellm

            litellm.suppress_debug_info = True  # it prints a provider list to stdout for a model it does not know

            prompt_cost, completion_cost = litellm.cost_per_token(model=model, prompt_tokens=usage.get("prompt_tokens") or 0,
                                                                  completion_tokens=usage.get("completion_tokens") or 0)
            cost += prompt_cost + completion_cost
        except Exception:  # noqa: BLE001 - litellm does not know this model (a local one): no price
            cost = None
            break
    return {"tokens_in": total_in, "tokens_out": total_out, "cost_usd": cost,
            "tokens_by_model": {m: {"in": u.get("prompt_tokens") or 0, "out": u.get("completion_tokens") or 0} for m, u in by_model.items()}}


def answer_question(program: dspy.Module, example) -> dict:
    """One question's record: the program's reply with its time, LM calls and tokens, or its failure (never raised)."""
    start = time.perf_counter()
    try:
        # per question and per thread, so concurrent questions count apart
        with dspy.context(track_usage=True), counting_lm_calls(program) as counter:
            pred = program(conversation=example.conversation)
        return (prediction_record(example, pred, seconds=time.perf_counter() - start, lm_calls=counter.count) | token_usage(pred)
                | {"tokens_by_step": {name: dict(t) for name, t in counter.tokens_by_step.items() if t["in"] or t["out"]}})
    except Exception as exc:  # noqa: BLE001 - one question's failure must not end the run
        logger.warning("question %s failed: %s", example.id, exc)
        return failure_record(example, exc, seconds=time.perf_counter() - start)


def run_eval(program: dspy.Module, examples: list[dspy.Example], *, run_dir: Path, k: int = 5,
             on_question: Callable[[int, int, dict], None] | None = None, retry_errors: bool = True, threads: int = 1) -> EvalResult:
    """Answer every example, appending each record to ``run_dir/predictions.jsonl`` as soon as it is done.

    Questions already in that file are not asked again, so an interrupted run resumes where it stopped;
    with ``retry_errors`` a question whose record is a failure (route ``error``, often transient) is asked
    again. An error in one question is recorded as that question's failure and the run goes on.

    With ``threads`` > 1 the questions run concurrently on DSPy's ``ParallelExecutor``, which carries DSPy's
    settings (LM, adapter, callbacks) into its threads. Lines are appended as questions finish (so in finishing
    order); the records, scores and metrics are in question order, the same as with one thread.
    """
    out_path = run_dir / PREDICTIONS_FILE
    done = read_finished(out_path)
    todo = [(i, e) for i, e in enumerate(examples, start=1) if not (e.id in done and not (retry_errors and done[e.id]["route"] == "error"))]
    lock = threading.Lock()
    with out_path.open("a", encoding="utf-8") as out:
        def finish(item) -> None:
            i, example = item
            rec = answer_question(program, example)
            with lock:
                append_record(out, rec)
                done[example.id] = rec
                if on_question:
                    on_question(i, len(examples), rec)

        if threads <= 1:
            for item in todo:
                finish(item)
        elif todo:
            from dspy.utils.parallelizer import ParallelExecutor

            # No straggler resubmission (a slow LM call is not a lost one) and no error budget: finish() never raises.
            ParallelExecutor(num_threads=threads, disable_progress_bar=True, timeout=24 * 3600, straggler_limit=len(todo) + 1,
                             max_errors=len(todo) + 1).execute(finish, todo)
    records = [done[e.id] for e in examples]
    scores = question_scores(examples, records, k=k)
    summary = run_summary(scores, records)
    write_atomic(run_dir / "scores.jsonl", "".join(json.dumps(s) + "\n" for s in scores))
    write_atomic(run_dir / "metrics.json", json.dumps(summary, indent=2))
    return EvalResult(records, scores, summary, run_dir)


def question_scores(examples: list[dspy.Example], records: list[dict], *, k: int) -> list[dict]:
    """Each question's scores (``score_prediction``, evidence at ``k``) with its id, kind and collection, as
    ``scores.jsonl`` holds them."""
    return [score_prediction(e, r, k=k) | {"id": e.id, "kind": e.get("kind", ""), "collection": e.get("collection") or "",
                                            "conversation": str(e.get("conversation_id") or e.id)}
            for e, r in zip(examples, records, strict=True)]


def run_summary(scores: list[dict], records: list[dict]) -> dict:
    """What ``metrics.json`` holds before judging: the means and tables of ``aggregate`` over the per-question
    ``scores``, the ranking metrics per collection, and what the questions' ``records`` cost (seconds, LM calls and
    tokens per question, the run's price where litellm knows every model's)."""
    summary = aggregate([{k: v for k, v in s.items() if k not in ("id", "kind", "collection", "conversation")} for s in scores])
    summary |= per_collection(scores)
    summary["seconds_per_question"] = sum(r["seconds"] for r in records) / len(records)
    summary["lm_calls_per_question"] = sum(r["lm_calls"] for r in records) / len(records)
    summary["tokens_in_per_question"] = sum(r.get("tokens_in") or 0 for r in records) / len(records)
    summary["tokens_out_per_question"] = sum(r.get("tokens_out") or 0 for r in records) / len(records)
    costs = [r.get("cost_usd") for r in records]
    summary["cost_usd"] = sum(costs) if costs and all(c is not None for c in costs) else None
    return summary


def judge_records(examples: list[dspy.Example], records: list[dict], judges, passage_text: dict[str, str], *, run_dir: Path) -> dict:
    """Run MTRAGEval's judges over finished records; per-question results go to ``hm.jsonl`` as each is judged.

    Questions already judged there are not judged again (an interrupted judging resumes); a question whose
    judging fails is recorded with its error, left out of the means (``n_judge_failed``) and retried on resume.

    Returns:
        Means of the conditioned RL_F, RB_llm, RB_agg, their harmonic mean ``HM`` and the IDK rate.
    """
    from askfirst.evaluation.mtrag_judges import aggregate_hm, judge_reply

    by_id = {example.id: rec for example, rec in zip(examples, records, strict=True)}

    def judged(example) -> dict:
        rec = by_id[example.id]
        row = judge_reply(judges, example, rec["answer"], [passage_text[p] for p in rec["retrieved"] if p in passage_text])
        return {"idk": row.idk, "clarification": row.clarification, "raw": row.raw, "conditioned": row.conditioned,
                "conditioned_2026_01": row.get("conditioned_2026_01"), "hm": row.hm, "similarity": row.get("similarity"),
                "rb_agg_parts": row.get("rb_agg_parts")}

    done = each_resumably(examples, judged, checkpoint=run_dir / "hm.jsonl", what="judging")
    rows = [done[e.id] for e in examples if e.id in done and "error" not in done[e.id]]
    summary = aggregate_hm([dspy.Prediction(**r) for r in rows]) if rows else {"HM": None}
    return summary | {"n_judge_failed": len(examples) - len(rows)}


def ambiguity_scores(examples: list[dspy.Example], records: list[dict], *, extract=None, judges=None,
                     passage_text: dict[str, str] | None = None, run_dir: Path) -> dict:
    """Scores for ambiguous questions; per-question rows go to ``ambiguity.jsonl``.

    - Questions with ``qa_pairs`` (ASQA, AmbigNQ): STR-EM; Disambig-F1 when ``extract`` is given
      (``extract(clarified_question, long_answer) -> short answer``: an LM stands in for the original
      metric's frozen extractive QA model, not available offline); the four 0-5 LLM-as-judge scores when
      ``judges`` (``AmbiguityJudges``) is given.
    - URASys ambiguous questions (``kind`` ending in ``_ambiguous``, ``clarification_options`` = the ``info``
      items): ``asks_for_info`` is 1 when the reply is a clarification that asks for at least one item
      (judged by ``judges``), 0 for any other reply.

    Returns:
        Means over the questions each score applies to, with their counts.
    """
    record = dict(zip((e.id for e in examples), records, strict=True))
    done = each_resumably(examples, lambda e: _ambiguity_row(e, record[e.id], extract=extract, judges=judges, passage_text=passage_text),
                          checkpoint=run_dir / AMBIGUITY_FILE, what="ambiguity scoring")
    failed = sum("error" in done[e.id] for e in examples)
    rows = [row for e in examples if "error" not in done[e.id] and (row := {k: v for k, v in done[e.id].items() if k != "id"})]
    keys = sorted({k for r in rows for k in r})
    summary: dict = {"n_judge_failed": failed} if failed else {}
    for key in keys:
        values = [r[key] for r in rows if r.get(key) is not None]
        summary[key] = sum(values) / len(values) if values else None
        summary[f"n_{key}"] = len(values)
    return summary


def _ambiguity_row(example, rec: dict, *, extract, judges, passage_text) -> dict:
    """One question's ambiguity scores (empty when none applies to it)."""
    from askfirst.evaluation.ambiguity_metrics import disambig_f1, str_em

    row: dict = {}
    pairs = example.get("qa_pairs")
    if pairs:
        row["str_em"] = str_em(rec["answer"], [a for _, a in pairs])
        if extract is not None:
            row["disambig_f1"] = disambig_f1(rec["answer"], pairs, extract)
        if judges is not None:
            texts = [(passage_text or {}).get(p, "") for p in rec.get("retrieved") or []]
            row |= judges.long_answer(question=example.conversation[-1]["content"], qa_pairs=pairs, passages=texts, answer=rec["answer"])
    if str(example.get("kind", "")).endswith("_ambiguous") and example.get("clarification_options") and judges is not None:
        asks = rec["route"] == "clarify" and judges.asks_for_info(
            question=example.conversation[-1]["content"], info=example.clarification_options, reply=rec["answer"])
        row["asks_for_info"] = None if asks is None else float(asks)
    return row
