"""The route policy: the one place the askfirst program decides, from the signals its stages recorded, what to do.

A fitted policy is a multinomial logistic regression over the named signals of ``signals.py`` (standardised), fitted
by scikit-learn with balanced class weights (every route counts alike, as per-class route accuracy does) or the
questions' own mix (every question counts alike, as route accuracy does), its logits divided by a temperature fitted on
held-out folds, and stored as plain JSON in the compiled program, read back through a schema check. Today's hand-set rules stay as
:func:`rules_route`, the fallback where no fitted policy exists and the baseline a fitted one is compared with.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Annotated, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from scipy.special import softmax

from askfirst.programs.askfirst.signals import FEATURES

ROUTES = ("answer", "partial", "clarify", "idk")
POLICY_KEY = "route_policy"  # its key in a compiled program's state JSON
KIND = "logistic"
CLASS_WEIGHTS = ("balanced", "natural")  # every route counts alike / every question counts alike


class PolicyError(ValueError):
    """A route policy that cannot be read or fitted (the message says why)."""


class RoutePolicy(BaseModel):
    """A fitted route policy: P(route | signals) = softmax((coef @ ((x - mean) / scale) + intercept) / temperature).

    Attributes:
        features: The signals it reads, in the order of its columns (each a name of ``signals.FEATURES``).
        routes: The routes it chooses between (those its training questions had).
        fitted_on: How many training questions each route had.
        temperature: Divides the logits, so the probabilities match held-out frequencies (the route chosen is the same).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str = Field(KIND, pattern=f"^{KIND}$")
    features: list[str] = Field(min_length=1, max_length=len(FEATURES))
    routes: list[str] = Field(min_length=2, max_length=len(ROUTES))
    mean: list[float]
    scale: list[float]
    coef: list[list[float]]
    intercept: list[float]
    C: float = Field(1.0, gt=0)
    class_weight: Literal[CLASS_WEIGHTS] = "balanced"
    temperature: float = Field(1.0, gt=0, le=100)
    fitted_on: dict[str, Annotated[int, Field(ge=0)]] = {}

    @model_validator(mode="after")
    def _shapes(self) -> RoutePolicy:
        unknown = sorted(set(self.features) - set(FEATURES))
        if unknown:
            raise ValueError(f"unknown signal(s) {unknown}; the program records {sorted(FEATURES)}")
        if sorted(set(self.routes)) != sorted(self.routes) or set(self.routes) - set(ROUTES):
            raise ValueError(f"routes must be distinct routes of {list(ROUTES)}, not {self.routes}")
        n, m = len(self.features), len(self.routes)
        rows = 1 if m == 2 else m  # scikit-learn's binary model has one row of coefficients
        if len(self.mean) != n or len(self.scale) != n or len(self.coef) != rows or any(len(r) != n for r in self.coef):
            raise ValueError(f"shapes do not fit {n} features and {m} routes")
        if len(self.intercept) != rows:
            raise ValueError(f"intercept must have {rows} entries")
        values = [*self.mean, *self.scale, *self.intercept, *(v for r in self.coef for v in r)]
        if not all(math.isfinite(v) for v in values) or any(s <= 0 for s in self.scale):
            raise ValueError("every parameter must be a finite number, and every scale positive")
        return self

    @classmethod
    def from_json(cls, data: object, where: str = "route_policy") -> RoutePolicy:
        """The policy ``data`` (a parsed JSON object) describes, checked.

        Raises:
            PolicyError: Not an object of this schema (unknown keys, signals or routes; wrong shapes; non-finite values).
        """
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            raise PolicyError(f"{where}: not a route policy ({'.'.join(map(str, first['loc'])) or 'policy'}: {first['msg']})") from None

    def to_json(self) -> dict:
        return self.model_dump()

    def logits(self, signals: dict[str, float]) -> np.ndarray:
        """Each route's score for one question's ``signals`` before the temperature (a signal it does not find counts as 0)."""
        x = (np.array([float(signals.get(f, 0.0)) for f in self.features]) - np.array(self.mean)) / np.array(self.scale)
        logits = np.array(self.coef) @ x + np.array(self.intercept)
        return np.array([0.0, logits[0]]) if len(self.routes) == 2 else logits  # binary: the row scores the second route

    def probabilities(self, signals: dict[str, float]) -> dict[str, float]:
        """P(route) for one question's ``signals``."""
        return dict(zip(self.routes, map(float, softmax(self.logits(signals) / self.temperature))))

    def route(self, signals: dict[str, float]) -> tuple[str, dict[str, float]]:
        """The most probable route and every route's probability."""
        probs = self.probabilities(signals)
        return max(probs, key=probs.get), probs

    def weights(self) -> dict[str, dict[str, float]]:
        """Each route's coefficient per signal (on the standardised scale), for a report."""
        routes = self.routes[1:] if len(self.routes) == 2 else self.routes
        return {route: dict(zip(self.features, row)) for route, row in zip(routes, self.coef)}


def fit_policy(rows: list[dict[str, float]], routes: list[str], *, C: float = 1.0, features: tuple[str, ...] = tuple(FEATURES),
               class_weight: str = "balanced") -> RoutePolicy:
    """Fit a policy to questions' ``rows`` of signals and their expected ``routes``.

    Args:
        class_weight: ``balanced`` (each route weighs alike) or ``natural`` (each question weighs alike).

    Raises:
        PolicyError: Fewer than two routes among the questions, or no questions.
    """
    from sklearn.linear_model import LogisticRegression

    counts = Counter(routes)
    if len(rows) != len(routes) or len(counts) < 2:
        raise PolicyError(f"a policy needs questions of at least two routes; got {dict(counts) or 'none'}")
    x = np.array([[float(r.get(f, 0.0)) for f in features] for r in rows])
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0  # a signal constant on the training questions carries no weight
    if class_weight not in CLASS_WEIGHTS:
        raise PolicyError(f"class_weight is one of {', '.join(CLASS_WEIGHTS)}, not {class_weight!r}")
    model = LogisticRegression(C=C, class_weight="balanced" if class_weight == "balanced" else None, max_iter=2000)
    model.fit((x - mean) / scale, routes)
    return RoutePolicy(features=list(features), routes=[str(c) for c in model.classes_], mean=mean.tolist(), scale=scale.tolist(),
                       coef=model.coef_.tolist(), intercept=model.intercept_.tolist(), C=C, class_weight=class_weight, fitted_on=dict(sorted(counts.items())))


def rules_route(extras: dict, *, label: str | None, assessed: str, follow_up: bool, config, unanswerable_route: str = "idk") -> str:
    """Today's hand-set rules as one decision over the verdicts the stages recorded in ``extras``, in the order the
    rules path applies them; ``assessed`` is the assessment's route (the retrieval gate's "I don't know" included).
    Escalation and the debate, which retrieve again, are the rules path's alone."""
    ask_first = config.mode == "ask_first"
    if ask_first and extras.get("dangling") and (config.dangling_follow_up if follow_up else config.dangling_reference):
        return "clarify"
    switch = extras.get("topic_switch") or {}
    if ask_first and config.topic_switch_below is not None and switch.get("switched") and not extras.get("gated"):
        return "clarify"
    absent = extras.get("absent_terms") or {}
    if absent.get("verdict") == "none":
        return unanswerable_route
    if ask_first and (extras.get("referent") or {}).get("flagged"):
        return "clarify"
    route = "answer" if assessed == "clarify" and not ask_first else assessed
    if ask_first and config.ambiguity != "off" and label not in ("UNANSWERABLE", "PARTIAL") and (extras.get("ambiguity") or {}).get("ambiguous"):
        return "clarify"
    cue, documents = extras.get("referent_cue") or [], extras.get("cue_documents") or 0
    answered_first = (route == "answer" and not follow_up and config.first_turn_cue_answered
                      and extras.get("question_form", "fact") == "fact")
    if (route == "idk" or answered_first) and ask_first and config.referent_cue and not extras.get("gated") and cue:
        if follow_up or documents >= (2 if answered_first else 1):
            return "clarify"
    return route
