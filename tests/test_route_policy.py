"""The route policy: signals recorded for every question, one fitted decision, its JSON and its schema check."""

import json
import math

import dspy
import pytest

from askfirst.programs.askfirst.policy import POLICY_KEY, PolicyError, RoutePolicy, fit_policy
from askfirst.programs.askfirst.signals import FEATURES, SIGNAL_SETS, with_rules
from tests.askfirst_harness import FEES_FOLLOW_UP, UNANSWERABLE, run, scripted

FITTED = "askfirst.policy=fitted"


def _rows(n: int = 40) -> tuple[list[dict], list[str]]:
    """Questions whose route follows two signals: a high P(ANSWERABLE) answers, a dangling reference asks, else idk."""
    rows, routes = [], []
    for i in range(n):
        p, dangling = (i % 10) / 10, float(i % 7 == 0)
        rows.append({"p_answerable": p, "dangling": dangling, "top_cosine": 0.3 + p / 2})
        routes.append("clarify" if dangling else "answer" if p >= 0.5 else "idk")
    return rows, routes


def test_every_stage_records_its_signal(schema_lm):
    reply, _, _, _ = run(schema_lm, "How much is the lab fee?", FITTED)
    signals = reply.extras["signals"]
    assert set(signals) == set(FEATURES)
    assert all(isinstance(v, float) and math.isfinite(v) for v in signals.values())
    assert signals["p_answerable"] > 0.5 and signals["follow_up"] == 0.0 and signals["top_cosine"] == pytest.approx(0.9)
    assert signals["top_cosine_percentile"] == 0.75  # 0.9 is above three of the collection's four reference cosines
    assert signals["diverges"] == 1.0 and signals["divergence_options"] == 2.0
    assert reply.extras["route_probabilities"] is None


@pytest.mark.parametrize("question, overrides, script", [
    ("How much is the lab fee?", [], None),  # divergence: two fees
    ("How much is the lab fee?", ["askfirst.ambiguity=off"], None),
    ("How much is the lab fee?", ["askfirst.ambiguity=off"], scripted(asked_about=UNANSWERABLE)),
    ("When did he return to work?", [], None),  # a dangling pronoun
    (FEES_FOLLOW_UP, [], None),
    ("How much is the lab fee?", ["askfirst.min_top_cosine=0.95"], None),  # the gate (the scripted cosine is 0.9)
])
def test_without_a_fitted_policy_the_rules_decide_as_the_rules_path_does(schema_lm, question, overrides, script):
    rules, _, _, _ = run(schema_lm, question, *overrides, script=script)
    fitted, _, _, _ = run(schema_lm, question, *overrides, FITTED, script=script)
    assert fitted.extras["rules_route"] == fitted.route == rules.route


def test_a_follow_up_records_its_turn_and_an_unanswerable_assessment(schema_lm):
    reply, _, _, _ = run(schema_lm, FEES_FOLLOW_UP, FITTED, script=scripted(asked_about=UNANSWERABLE))
    signals = reply.extras["signals"]
    assert signals["follow_up"] == 1.0 and signals["turn_index"] == 1.0
    assert signals["p_unanswerable"] > signals["p_answerable"]
    assert reply.extras["rules_route"] == reply.route == "idk"


def test_the_gate_is_a_signal_in_fitted_mode_the_assessment_still_runs(schema_lm):
    reply, _, _, lm = run(schema_lm, "How much is the lab fee?", FITTED, "askfirst.min_top_cosine=0.5",
                          cosines={"How much is the lab fee?": 0.2})
    assert reply.extras["gated"] and reply.extras["rules_route"] == "idk"
    assert reply.extras["signals"]["top_cosine"] == pytest.approx(0.2)
    assert reply.extras["signals"]["p_answerable"] > 0.5  # the assessment ran, though the gate turned it away


def test_a_fitted_policy_decides_and_records_its_probabilities(schema_lm):
    policy = fit_policy(*_rows())  # answers a high P(ANSWERABLE) whatever divergence says
    _, program, _, _ = run(schema_lm, "How much is the lab fee?", FITTED)
    program.route_policy = policy
    with dspy.context(lm=schema_lm(scripted()), adapter=dspy.JSONAdapter()):
        decided = program(conversation="How much is the lab fee?")
    probs = decided.extras["route_probabilities"]
    assert set(probs) == set(policy.routes) and sum(probs.values()) == pytest.approx(1.0)
    assert decided.extras["rules_route"] == "clarify"  # the rules ask which fee (two passages diverge)
    assert decided.route == max(probs, key=probs.get) == "answer" and decided.citations


def test_fit_learns_the_signals_that_separate_routes_and_round_trips_through_json():
    rows, routes = _rows()
    policy = fit_policy(rows, routes)
    again = RoutePolicy.from_json(json.loads(json.dumps(policy.to_json())))
    assert again == policy
    assert policy.route({"p_answerable": 0.9, "dangling": 0.0, "top_cosine": 0.75})[0] == "answer"
    assert policy.route({"p_answerable": 0.1, "dangling": 0.0, "top_cosine": 0.35})[0] == "idk"
    assert policy.route({"p_answerable": 0.1, "dangling": 1.0, "top_cosine": 0.35})[0] == "clarify"
    assert policy.fitted_on == {"answer": 17, "clarify": 6, "idk": 17}
    assert policy.weights()["clarify"]["dangling"] > 0


def test_natural_weights_favour_the_common_route_where_balanced_weights_favour_the_rare_one():
    rows = [{"p_answerable": 0.4 + 0.2 * (i % 2)} for i in range(40)]
    routes = ["idk" if i % 10 == 1 else "answer" for i in range(40)]  # 4 idk, all at 0.6, among 20 answers at 0.6
    natural, balanced = (fit_policy(rows, routes, class_weight=w) for w in ("natural", "balanced"))
    assert natural.route({"p_answerable": 0.6})[0] == "answer" and balanced.route({"p_answerable": 0.6})[0] == "idk"
    assert RoutePolicy.from_json(natural.to_json()).class_weight == "natural"
    with pytest.raises(PolicyError, match="class_weight"):
        fit_policy(rows, routes, class_weight="pickle")


def test_the_rules_signal_set_keeps_the_rules_and_re_maps_a_route_the_labels_contradict():
    said = ["answer"] * 20 + ["idk"] * 10 + ["clarify"] * 10
    expected = ["answer"] * 18 + ["idk"] * 2 + ["idk"] * 9 + ["answer"] + ["answer"] * 8 + ["clarify"] * 2  # its clarify is mostly wrong
    policy = fit_policy([with_rules({}, r) for r in said], expected, features=SIGNAL_SETS["rules"], class_weight="natural", C=10.0)
    assert [policy.route(with_rules({}, r))[0] for r in ("answer", "idk", "clarify")] == ["answer", "idk", "answer"]


def test_fit_needs_two_routes():
    with pytest.raises(PolicyError, match="two routes"):
        fit_policy([{"p_answerable": 1.0}] * 3, ["answer"] * 3)


@pytest.mark.parametrize("change, message", [
    ({"features": ["p_answerable", "os.system"]}, "unknown signal"),
    ({"routes": ["answer", "answer", "idk"]}, "routes"),
    ({"routes": ["answer", "shell", "idk"]}, "routes"),
    ({"mean": [float("nan")] * 3}, "finite"),
    ({"scale": [0.0, 1.0, 1.0]}, "positive"),
    ({"coef": [[1.0]]}, "shapes"),
    ({"endpoint": "http://evil.example"}, "Extra inputs"),
    ({"kind": "pickle"}, "kind"),
    ({"class_weight": "custom"}, "class_weight"),
    ({"fitted_on": {"answer": -3}}, "fitted_on"),
    ({"temperature": 0.0}, "temperature"),
    ({"temperature": float("inf")}, "temperature"),
])
def test_a_crafted_policy_is_refused(change, message):
    policy = fit_policy(*_rows()).to_json()
    policy["features"], policy["mean"], policy["scale"] = ["p_answerable", "dangling", "top_cosine"], [0.0] * 3, [1.0] * 3
    policy["coef"] = [[0.0] * 3] * 3
    with pytest.raises(PolicyError, match=message):
        RoutePolicy.from_json(policy | change, where=POLICY_KEY)
