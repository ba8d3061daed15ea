"""Cross-validating the route policy on a run's recorded signals, by conversation, against the hand-set rules.

An eval run with ``askfirst.policy=fitted`` records every question's signals and the rules' route
(``predictions.jsonl``) beside its expected route (``scores.jsonl``). Here the policy is fitted on k-1 folds of
conversations and scored on the fold it never saw, so every figure is a held-out one; nothing is chosen on the fold
it is scored on (the regularisation strength, the signal set, the class weighting and then the temperature are chosen
by inner folds of the training folds).
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import numpy as np
from scipy.special import softmax

from askfirst.datasets.errors import DataError
from askfirst.evaluation.runner import PREDICTIONS_FILE, read_finished, read_scores
from askfirst.evaluation.signals_table import is_signals_table, read_signals_table
from askfirst.evaluation.stats import paired_bootstrap, proportion_ci
from askfirst.programs.askfirst.policy import CLASS_WEIGHTS, ROUTES, PolicyError, RoutePolicy, fit_policy
from askfirst.programs.askfirst.signals import SIGNAL_SETS, with_rules


def policy_questions(run_dir: Path) -> list[dict]:
    """Each scored question of an eval run (a stopped one's finished questions) with its signals: ``id``,
    ``conversation``, ``collection`` (``""`` where the question set names none), ``expected``, ``signals``, ``rules``
    (the rules' route on the same signals) and ``route``. A signals table (a file ``askfirst policy export`` wrote) in
    place of the run folder gives its rows.

    Raises:
        DataError: The run recorded no signals (it ran with ``askfirst.policy=rules``, or is not an askfirst eval run),
            or a signal that is not a finite number (the question named).
    """
    if is_signals_table(run_dir):
        return [row | {"signals": with_rules(row["signals"], row["rules"])} for row in read_signals_table(run_dir)]
    records = read_finished(run_dir / PREDICTIONS_FILE)
    if (run_dir / "scores.jsonl").exists():
        scores = read_scores(run_dir)
    else:  # a run stopped before its end: its finished questions, scored as it would have
        from askfirst.evaluation.pooled_runs import pooled_run

        scores = pooled_run([run_dir]).scores
    rows = []
    for score in scores:
        extras = (records.get(score["id"]) or {}).get("extras") or {}
        if extras.get("signals") is None:
            continue
        signals = with_rules(extras["signals"], extras["rules_route"])  # a run recorded before the rules were a signal too
        if not all(isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) for v in signals.values()):
            raise DataError(f"{run_dir}: question {score['id']}'s signals are not all finite numbers")
        rows.append({"id": score["id"], "conversation": score.get("conversation") or score["id"], "collection": score.get("collection") or "",
                     "expected": score["expected_route"],
                     "signals": signals, "rules": extras["rules_route"], "route": score["route"]})
    if not rows:
        raise DataError(f"{run_dir}: no question with recorded signals; run `askfirst eval --set askfirst.policy=fitted` first")
    return rows


def conversation_folds(rows: list[dict], *, folds: int, seed: int = 0) -> list[np.ndarray]:
    """``folds`` sets of row indices; a conversation's questions are all in one, and each fold's routes are as close to the
    whole's mix as whole conversations allow (scikit-learn's StratifiedGroupKFold, shuffled by ``seed``).

    Raises:
        DataError: Fewer conversations than folds.
    """
    from sklearn.model_selection import GroupKFold, StratifiedGroupKFold

    groups = [r["conversation"] for r in rows]
    if folds < 2:
        raise DataError("cross-validation needs at least two folds (two conversations)")
    if len(set(groups)) < folds:
        raise DataError(f"{len(set(groups))} conversations cannot make {folds} folds")
    x, routes = np.zeros(len(rows)), [r["expected"] for r in rows]
    if max(Counter(routes).values()) < folds:  # no route has a question for every fold: folds by conversation alone
        return [test for _, test in GroupKFold(n_splits=folds, shuffle=True, random_state=seed).split(x, routes, groups)]
    splitter = StratifiedGroupKFold(n_splits=folds, shuffle=True, random_state=seed)
    return [test for _, test in splitter.split(x, routes, groups)]


def collection_folds(rows: list[dict]) -> list[np.ndarray]:
    """One set of row indices per collection, in name order: each fold is a collection the others never saw.

    Raises:
        DataError: A question names no collection, or the questions come from fewer than two.
    """
    names = sorted({r.get("collection", "") for r in rows})
    if "" in names:
        raise DataError("folds by collection need every question's collection (a table exported before it was recorded has none)")
    if len(names) < 2:
        raise DataError(f"folds by collection need questions from two collections or more, not {names}")
    return [np.array([i for i, r in enumerate(rows) if r["collection"] == name]) for name in names]


def _per_route(expected: list[str], taken: list[str]) -> dict[str, dict]:
    out = {}
    for route in ROUTES:
        hits = [t == e for e, t in zip(expected, taken) if e == route]
        if hits:
            out[route] = {"n": len(hits), "right": sum(hits), "share": sum(hits) / len(hits), "ci95": list(proportion_ci(sum(hits), len(hits)))}
    return out


C_GRID = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0)  # what select_settings chooses C from
Settings = tuple[float, str, str]  # (C, a name of signals.SIGNAL_SETS, a class weighting of policy.CLASS_WEIGHTS)
SELECT_BY = ("route", "macro")  # what select_settings maximises: route accuracy, or the mean of per-route accuracies
FOLDS_BY = ("conversation", "collection")  # what cross_validate holds out: folds of conversations, or one collection at a time
DEFAULT_SETTINGS: Settings = (1.0, "signals", "balanced")


def _score(expected: list[str], taken: list[str], select_by: str) -> float:
    if select_by == "route":
        return float(np.mean([t == e for t, e in zip(taken, expected)]))
    return float(np.mean([v["share"] for v in _per_route(expected, taken).values()]))


def select_settings(rows: list[dict], *, folds: int = 3, seed: int = 0, grid: tuple[float, ...] = C_GRID,
                    select_by: str = "route") -> Settings:
    """The regularisation strength, signal set and class weighting with the best ``select_by`` score over ``folds``
    inner folds of ``rows`` by conversation: chosen on these rows only, never on a fold a figure is reported on. Ties go
    to the first of each (the smaller C); with too few conversations for inner folds, ``DEFAULT_SETTINGS``."""
    if select_by not in SELECT_BY:
        raise DataError(f"select_by is one of {', '.join(SELECT_BY)}, not {select_by!r}")
    if len({r["conversation"] for r in rows}) < folds:
        return DEFAULT_SETTINGS
    inner = conversation_folds(rows, folds=folds, seed=seed)
    expected = [r["expected"] for r in rows]
    best, best_score = DEFAULT_SETTINGS, -1.0
    for weighting in CLASS_WEIGHTS:
        for name in SIGNAL_SETS:
            for C in grid:
                try:
                    taken = _held_out(rows, inner, settings=(C, name, weighting))
                except PolicyError:  # an inner training fold with one route
                    return DEFAULT_SETTINGS
                score = _score(expected, taken, select_by)
                if score > best_score + 1e-9:
                    best, best_score = (C, name, weighting), score
    return best


TEMPERATURES = tuple(float(t) for t in np.geomspace(0.25, 8.0, 31))  # what fit_temperature chooses from


def fit_temperature(rows: list[dict], settings: Settings, *, folds: int = 3, seed: int = 0) -> float:
    """The temperature (of ``TEMPERATURES``) whose probabilities have the least log loss on ``folds`` inner folds of
    ``rows`` by conversation, each scored by a policy fitted on the others: chosen on these rows only. 1.0 with too few
    conversations (or routes) for inner folds."""
    if len({r["conversation"] for r in rows}) < folds:
        return 1.0
    scored = []  # (logits, the expected route's column or None where the inner policy cannot choose it)
    for test in conversation_folds(rows, folds=folds, seed=seed):
        held = set(test.tolist())
        try:
            policy = _fit([r for i, r in enumerate(rows) if i not in held], settings, calibrate=False)
        except PolicyError:  # an inner training fold with one route
            return 1.0
        scored += [(policy.logits(rows[i]["signals"]), policy.routes.index(rows[i]["expected"]) if rows[i]["expected"] in policy.routes else None)
                   for i in test]
    choosable = [(z, k) for z, k in scored if k is not None]  # the others' loss does not depend on the temperature
    if not choosable:
        return 1.0

    def loss(t: float) -> float:
        return -sum(math.log(max(float(softmax(z / t)[k]), 1e-15)) for z, k in choosable)

    return min(TEMPERATURES, key=loss)


def _fit(rows: list[dict], settings: Settings, *, calibrate: bool = True, seed: int = 0) -> RoutePolicy:
    """The policy of ``settings`` fitted on ``rows``; with ``calibrate`` its temperature fitted by inner folds of them."""
    C, features, weighting = settings
    policy = fit_policy([r["signals"] for r in rows], [r["expected"] for r in rows], C=C, features=SIGNAL_SETS[features], class_weight=weighting)
    if not calibrate:
        return policy
    return policy.model_copy(update={"temperature": fit_temperature(rows, settings, seed=seed)})


def route_calibration(expected: list[str], probabilities: list[dict[str, float]], mixes: list[dict[str, float]], *,
                      bins: int = 10) -> dict:
    """How well a policy's route probabilities match the expected routes: the multiclass Brier score (the mean over
    questions of the squared gaps summed over routes, 0-2), the log loss (a route given no probability counts as 1e-15)
    and the ECE of the chosen route's probability against its being right. Beside them, as ``mix_brier`` and
    ``mix_log_loss``, the same scores of ``mixes``: each question's training route mix, what a policy fitted on the same
    questions that read no signal would give it."""
    from askfirst.evaluation.calibration import expected_calibration_error

    def brier(given: list[dict[str, float]]) -> float:
        return float(np.mean([sum((p.get(route, 0.0) - (route == e)) ** 2 for route in ROUTES) for e, p in zip(expected, given)]))

    def log_loss(given: list[dict[str, float]]) -> float:
        return float(np.mean([-math.log(max(p.get(e, 0.0), 1e-15)) for e, p in zip(expected, given)]))

    top = [max(p, key=p.get) for p in probabilities]
    confidence = [p[t] for p, t in zip(probabilities, top)]
    return {"brier": brier(probabilities), "log_loss": log_loss(probabilities),
            "ece": expected_calibration_error(confidence, [t == e for t, e in zip(top, expected)], bins=bins),
            "mean_confidence": float(np.mean(confidence)), "mix_brier": brier(mixes), "mix_log_loss": log_loss(mixes)}


def _mix(counts: dict[str, int]) -> dict[str, float]:
    """The share of each route among a policy's training questions (none when it records no counts)."""
    total = sum(counts.values())
    return {route: n / total for route, n in counts.items()} if total else {}


def _held_out(rows: list[dict], folds: list[np.ndarray], *, settings: Settings) -> list[str]:
    """Each row's route by a policy fitted on the other folds."""
    taken: list[str] = [""] * len(rows)
    for test in folds:
        held = set(test.tolist())
        policy = _fit([r for i, r in enumerate(rows) if i not in held], settings, calibrate=False)  # the route is the same
        for i in test:
            taken[i] = policy.route(rows[i]["signals"])[0]
    return taken


def cross_validate(rows: list[dict], *, folds: int = 5, seed: int = 0, settings: Settings | None = None,
                   select_by: str = "route", by: str = "conversation") -> dict:
    """Held-out routes of a policy fitted fold by fold, and the rules' routes on the same questions: each one's route
    accuracy, per-route accuracy (Wilson CIs), macro accuracy and the paired bootstrap of the difference. With
    ``settings`` None each outer fold's settings are chosen by ``select_settings`` (maximising ``select_by``) on its
    training questions alone. ``by="collection"`` holds out one collection at a time (``folds`` unused), and the report
    adds each collection's route accuracy, fitted and rules."""
    if by not in FOLDS_BY:
        raise DataError(f"folds are by one of {', '.join(FOLDS_BY)}, not {by!r}")
    fold_of = collection_folds(rows) if by == "collection" else conversation_folds(rows, folds=folds, seed=seed)
    predicted: list[str] = [""] * len(rows)
    probabilities: list[dict[str, float]] = [{}] * len(rows)
    mixes: list[dict[str, float]] = [{}] * len(rows)
    chosen = []
    for test in fold_of:
        held = set(test.tolist())
        train = [r for i, r in enumerate(rows) if i not in held]
        fold_settings = select_settings(train, seed=seed, select_by=select_by) if settings is None else settings
        chosen.append(dict(zip(("C", "signals", "class_weight"), fold_settings)))
        try:
            policy = _fit(train, fold_settings, seed=seed)
        except PolicyError as exc:  # a training fold with one route: say so rather than guess
            raise DataError(f"a training fold cannot be fitted ({exc}); use fewer folds") from None
        for i in test:
            (predicted[i], probabilities[i]), mixes[i] = policy.route(rows[i]["signals"]), _mix(policy.fitted_on)
    per_collection = {rows[test[0]]["collection"]: _accuracies(rows, predicted, test) for test in fold_of} if by == "collection" else None
    return {"folds": len(fold_of), "by": by, "seed": seed, "select_by": select_by, "settings_per_fold": chosen,
            **_comparison(rows, predicted, "fitted"), **({"per_collection": per_collection} if per_collection else {}),
            "calibration": route_calibration([r["expected"] for r in rows], probabilities, mixes),
            "held_out": [{"id": r["id"], "expected": r["expected"], "fitted": p, "rules": r["rules"]} for r, p in zip(rows, predicted)]}


def _accuracies(rows: list[dict], predicted: list[str], test: np.ndarray) -> dict:
    """The route accuracy of the ``predicted`` and of the rules' routes on the rows of ``test``."""
    return {"n": len(test), "fitted": float(np.mean([predicted[i] == rows[i]["expected"] for i in test])),
            "rules": float(np.mean([rows[i]["rules"] == rows[i]["expected"] for i in test]))}


def compare_routes(rows: list[dict], policy: RoutePolicy) -> dict:
    """``policy``'s routes on ``rows`` unchanged (a set it was not fitted on) beside the rules' routes, with the
    calibration of its probabilities there."""
    taken, probabilities = zip(*(policy.route(r["signals"]) for r in rows))
    calibration = route_calibration([r["expected"] for r in rows], list(probabilities), [_mix(policy.fitted_on)] * len(rows)) if policy.fitted_on else {}
    return {**_comparison(rows, list(taken), "policy"), "calibration": calibration}


def _comparison(rows: list[dict], taken: list[str], name: str) -> dict:
    """``taken``'s and the rules' route accuracy, per-route accuracy (Wilson CIs), macro accuracy, confusion, and the
    paired bootstrap of the difference in route accuracy (by question)."""
    expected, rules = [r["expected"] for r in rows], [r["rules"] for r in rows]

    def summary(routes: list[str]) -> dict:
        per = _per_route(expected, routes)
        return {"route_accuracy": float(np.mean([t == e for t, e in zip(routes, expected)])), "per_route": per,
                "macro_accuracy": float(np.mean([v["share"] for v in per.values()])), "confusion": _confusion(expected, routes)}

    diff, low, high = paired_bootstrap([float(t == e) for t, e in zip(taken, expected)], [float(r == e) for r, e in zip(rules, expected)])
    return {"n": len(rows), "conversations": len({r["conversation"] for r in rows}), "expected": dict(sorted(Counter(expected).items())),
            name: summary(taken), "rules": summary(rules), "difference": {"route_accuracy": diff, "ci95": [low, high]}}


def _confusion(expected: list[str], taken: list[str]) -> dict[str, dict[str, int]]:
    table: dict[str, Counter] = {}
    for e, t in zip(expected, taken):
        table.setdefault(e, Counter())[t] += 1
    return {e: dict(sorted(c.items())) for e, c in sorted(table.items())}


def fit_rows(rows: list[dict], *, settings: Settings | None = None, seed: int = 0, select_by: str = "route") -> RoutePolicy:
    """The policy fitted on every row (what a shipped program uses; its expected accuracy is the cross-validated one),
    with ``settings`` chosen by ``select_settings`` on the same rows when not given."""
    return _fit(rows, select_settings(rows, seed=seed, select_by=select_by) if settings is None else settings, seed=seed)
