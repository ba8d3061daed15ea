"""A program's whole ranking against one pass of the hybrid retriever with the last user turn, on the same tasks.

The question it answers: on the MTRAG-UN tasks of an eval run that have qrels, the program's ranking (its
``ranked_docs``, scored as ``ranking_ndcg@5`` / ``ranking_recall@10`` in the run's ``scores.jsonl``) should be at
least as good as a single hybrid search (BM25 + dense, RRF) of the task's last user turn, as MTRAG's baseline
without query rewriting does. The run's finished questions are scored afresh, so a stopped run can be compared. Both are scored at document level with the same functions; the differences come with
paired BCa bootstrap intervals over tasks.

    python bench/single_pass_ranking.py runs/eval-… [--rewrite-check]

``--rewrite-check`` adds the ranking the askfirst program would have had with ``askfirst.rewrite_check`` on a run
made without it: on a task whose standalone rewrite the check refuses, the single pass (the program's simple stage
searches its query once, the same way), elsewhere the program's own; with its paired interval against the program.

The run's saved config names the questions and the index; the index must be the one the run searched.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from askfirst.config import load_config
from askfirst.datasets.splits import configured_questions
from askfirst.evaluation.retrieval_metrics import ndcg_at_k, recall_at_k, unique_in_order
from askfirst.evaluation.runner import read_finished
from askfirst.evaluation.scoring import score_prediction
from askfirst.evaluation.stats import paired_bootstrap
from askfirst.programs.askfirst.standalone import checked_rewrite
from askfirst.programs.common.conversation import to_turns
from askfirst.retrieval.factory import open_retriever, open_store

METRICS = (("ranking_ndcg@5", lambda ranked, qrels: ndcg_at_k(ranked, qrels, 5)),
           ("ranking_recall@10", lambda ranked, qrels: recall_at_k(ranked, qrels, 10)))


def last_user_turn(example) -> str:
    return to_turns(example.conversation)[-1].content  # the reader every program uses: a conversation ends with a user turn


def refused_rewrite(example, record: dict) -> bool:
    """Whether ``askfirst.rewrite_check`` would refuse the standalone query ``record`` searched with."""
    question, query = last_user_turn(example), (record.get("extras") or {}).get("standalone_query")
    return bool(query) and query != question and checked_rewrite(question, query) is None


def compare(run_dir: Path, *, rewrite_check: bool = False) -> dict:
    config = load_config(run_dir / "config.yaml")
    finished = read_finished(run_dir / "predictions.jsonl")  # a stopped run's finished questions count too
    scores = {e.id: score_prediction(e, finished[e.id], k=config.program.evidence_k) for e in configured_questions(config) if e.id in finished}
    examples = [e for e in configured_questions(config) if e.id in scores and scores[e.id].get("ranking_ndcg@5") is not None]
    store = open_store(config)
    try:
        retriever = open_retriever(config, store)
        program, single, checked = ({m: [] for m, _ in METRICS} for _ in range(3))
        refused = 0
        for example in examples:
            qrels = dict(example.get("qrels") or {})
            ranked = unique_in_order([h.passage.doc_id for h in retriever.search(last_user_turn(example), 10)])
            refuse = rewrite_check and refused_rewrite(example, finished[example.id])
            refused += refuse
            for name, metric in METRICS:
                program[name].append(scores[example.id][name])
                single[name].append(metric(ranked, qrels))
                checked[name].append(single[name][-1] if refuse else program[name][-1])
    finally:
        store.close()
    out = {"run": str(run_dir), "tasks": len(examples), "refused": refused if rewrite_check else None}
    for name, _ in METRICS:
        diff, low, high = paired_bootstrap(program[name], single[name])
        out[name] = {"program": sum(program[name]) / len(examples), "single_pass": sum(single[name]) / len(examples),
                     "difference": diff, "ci95": [low, high]}
        if rewrite_check:
            diff, low, high = paired_bootstrap(checked[name], program[name])
            out[name]["rewrite_check"] = {"value": sum(checked[name]) / len(examples), "difference": diff, "ci95": [low, high]}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--rewrite-check", action="store_true", help="also the ranking with askfirst.rewrite_check applied")
    args = parser.parse_args(argv)
    result = compare(args.run_dir, rewrite_check=args.rewrite_check)
    if not result["tasks"]:
        print(f"{args.run_dir}: no scored task with qrels", file=sys.stderr)
        return 2
    print(f"{result['tasks']} tasks with qrels in {args.run_dir}\n")
    print("| metric | the program's ranking | one hybrid pass, last user turn | difference [95% CI] |")
    print("|---|---|---|---|")
    for name, _ in METRICS:
        r = result[name]
        print(f"| {name} | {r['program']:.4f} | {r['single_pass']:.4f} | {r['difference']:+.4f} [{r['ci95'][0]:+.4f}, {r['ci95'][1]:+.4f}] |")
    if args.rewrite_check:
        print(f"\nWith askfirst.rewrite_check: {result['refused']} of the {result['tasks']} rewrites refused, those tasks searched "
              "as the user's turn:\n")
        print("| metric | with the check | difference from the program's ranking [95% CI] |")
        print("|---|---|---|")
        for name, _ in METRICS:
            r = result[name]["rewrite_check"]
            print(f"| {name} | {r['value']:.4f} | {r['difference']:+.4f} [{r['ci95'][0]:+.4f}, {r['ci95'][1]:+.4f}] |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
