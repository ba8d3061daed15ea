"""Routes per expected route for each instruction a MIPROv2 compile chose between, on that compile's valset.

MIPROv2 logs one score a trial. This replays the compile's valset with each candidate of one step (the original, then
those of a ``compile.instruction_candidates`` file) and prints, per candidate, the right routes per expected route and
the tasks whose route differs from the original's. Run it after the compile: every LM call the compile made comes from
the DSPy cache, so it takes seconds where the compile took minutes (one LM job at a time still applies).

    python bench/instruction_variants.py runs/compile-… assess bench/candidates/assess.yaml
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from askfirst.config import load_config
from askfirst.datasets.splits import configured_questions, split_by_conversation
from askfirst.evaluation.runner import answer_question
from askfirst.evaluation.scoring import expected_route
from askfirst.optimizers.instruction_candidates import read_candidates
from askfirst.programs.common.routes import ROUTES
from askfirst.session import open_session


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="a compile run folder (its config.yaml names the split and the valset)")
    parser.add_argument("step", help="the step whose instruction varies, as the compile diff names it (e.g. assess)")
    parser.add_argument("candidates", type=Path, help="the compile.instruction_candidates file")
    args = parser.parse_args()
    cfg = load_config(args.run / "config.yaml")
    _, valset = split_by_conversation(configured_questions(cfg, split=cfg.compile.split), train_fraction=cfg.compile.train_fraction, seed=cfg.seed)
    session = open_session(cfg, update_index=False)
    try:
        steps = dict(session.program.named_predictors())
        predictor = steps[args.step]
        original = predictor.signature
        texts = [original.instructions, *read_candidates(args.candidates, list(steps))[args.step]]
        routes = []
        for text in texts:
            predictor.signature = original.with_instructions(text)
            routes.append({e.id: answer_question(session.program, e).get("route", "failed") for e in valset})
        predictor.signature = original
    finally:
        session.close()
    expected = {e.id: expected_route(e) for e in valset}
    totals = Counter(expected.values())
    print(f"{len(valset)} valset tasks of {args.run.name}; right routes per expected route\n")
    print("| candidate | right | " + " | ".join(f"{r} ({totals[r]})" for r in ROUTES if totals[r]) + " |")
    print("|---|---|" + "---|" * sum(1 for r in ROUTES if totals[r]))
    for i, by_id in enumerate(routes):
        right = Counter(expected[t] for t, r in by_id.items() if r == expected[t])
        print(f"| {'original' if i == 0 else i} | {sum(right.values())} | " + " | ".join(str(right[r]) for r in ROUTES if totals[r]) + " |")
    for i, by_id in enumerate(routes[1:], start=1):
        moved = [f"{t} ({expected[t]}): {routes[0][t]} -> {r}" for t, r in by_id.items() if r != routes[0][t]]
        print(f"\ncandidate {i}, routes unlike the original's: " + ("; ".join(moved) or "none"))


if __name__ == "__main__":
    main()
