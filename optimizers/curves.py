"""Per-step optimisation curves read from a compiled program, for MLflow and the run folder."""

from __future__ import annotations


def optimisation_curve(compiled) -> list[dict]:
    """One row per optimisation step: ``step``, ``metric_calls`` so far, the step's ``score`` and the best so far.

    GEPA (with ``track_stats``) gives one step per accepted candidate, scored on the full valset. MIPROv2 gives
    one step per trial, scored on a minibatch or the full valset (``full_eval``). ``rewrite_demos`` gives one step per
    candidate on the trainset, then the seed and the kept candidate on the valset. Other programs give ``[]``.
    """
    rows: list[dict] = list(getattr(compiled, "search_curve", None) or [])  # rewrite_demos writes its rows itself
    gepa = getattr(compiled, "detailed_results", None)
    if gepa is not None:
        for i, (score, calls) in enumerate(zip(gepa.val_aggregate_scores, gepa.discovery_eval_counts, strict=False)):
            rows.append({"step": i, "metric_calls": calls, "score": float(score), "full_eval": True})
    for trial, log in sorted((getattr(compiled, "trial_logs", None) or {}).items()):
        full = "full_eval_score" in log
        score = log.get("full_eval_score", log.get("mb_score"))
        if score is not None:  # MIPROv2 logs percentages; the curve is on the metric's own 0-1 scale
            rows.append({"step": int(trial), "metric_calls": log.get("total_eval_calls_so_far"), "score": float(score) / 100, "full_eval": full})
    best = float("-inf")
    for row in rows:
        if row["full_eval"]:
            best = max(best, row["score"])
        row["best_so_far"] = best if best > float("-inf") else None
    return rows


def instruction_diff(before: dict[str, str], after: dict[str, str]) -> str:
    """A unified diff of each predictor's instruction, before and after compiling (only the changed ones)."""
    import difflib

    out = []
    for name in sorted(set(before) | set(after)):
        a, b = before.get(name, ""), after.get(name, "")
        if a != b:
            out += difflib.unified_diff(a.splitlines(), b.splitlines(), f"{name} (before)", f"{name} (after)", lineterm="")
    return "\n".join(out)


def instructions(program) -> dict[str, str]:
    """Each named predictor's current instruction (its signature's docstring)."""
    return {name: predictor.signature.instructions for name, predictor in program.named_predictors()}
