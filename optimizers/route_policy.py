"""Fitting the askfirst program's route policy in ``askfirst compile``: its signals for the compile's questions are
computed once (an eval run under the compile's run folder, which resumes and answers repeated calls from the DSPy
cache), then the policy is fitted in seconds and cross-validated by conversation."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import dspy

from askfirst.datasets.errors import DataError
from askfirst.evaluation.policy_cv import cross_validate, fit_rows, policy_questions
from askfirst.evaluation.runner import run_eval
from askfirst.run_dir import write_atomic

SIGNALS_DIR = "signals"  # the compile run's eval of its questions, with their signals
CV_FILE = "policy_cv.json"
logger = logging.getLogger(__name__)


def fit_route_policy(program: dspy.Module, examples: list[dspy.Example], *, run_dir: Path, folds: int = 5,
                     seed: int = 0, threads: int = 1) -> dict:
    """Record ``program``'s signals on ``examples``, fit its route policy on all of them (set on ``program``) and return
    the k-fold cross-validation by conversation, which is also written to ``run_dir/policy_cv.json``.

    The signals are those of the program as it is (its prompts compiled first, when an optimiser ran), with no fitted
    policy, so the rules route while they are recorded and the signals do not depend on a policy.
    """
    signals_dir = run_dir / SIGNALS_DIR
    signals_dir.mkdir(exist_ok=True)
    program.route_policy = None
    run_eval(program, examples, run_dir=signals_dir, threads=threads,
             on_question=lambda i, n, rec: logger.info("signals %d/%d: %s", i, n, rec["id"]))
    rows = policy_questions(signals_dir)
    conversations = len({r["conversation"] for r in rows})
    try:
        report = cross_validate(rows, folds=min(folds, conversations), seed=seed)
    except DataError as exc:  # too few questions to hold any out: the policy is still fitted, its figures unknown
        report = {"n": len(rows), "cross_validation": f"not possible: {exc}"}
        logger.warning("the route policy is fitted on %d questions but not cross-validated: %s", len(rows), exc)
    program.route_policy = fit_rows(rows, seed=seed)
    report["policy"] = {"fitted_on": program.route_policy.fitted_on, "temperature": program.route_policy.temperature,
                        "weights": program.route_policy.weights()}
    write_atomic(run_dir / CV_FILE, json.dumps(report, indent=2) + "\n")
    return report
