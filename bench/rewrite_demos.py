"""The askfirst program's standalone rewrite without demonstrations, with a compiled program's, and with draws of MTRAG's
human rewrites: how well the query it searches ranks, on the MTRAG-UN follow-up tasks of a config's questions that
have qrels.

Only the rewrite step runs (on its configured LM, as the program calls it, with every rewrite check): each task's
search query is the program's own (``search_query``), and its ranking the simple stage's one hybrid search. Rows: the
last user turn as written (MTRAG's baseline without rewriting), the rewrite without demos, the rewrite with the demos
of ``program.compiled`` (when it has some), and with ``--demos`` human rewrites drawn as ``compile.optimizer=rewrite_demos``
draws them (``load_mtrag_rewrites``: other conversations than MTRAG-UN's) for each ``--seed``. Differences come with
paired BCa intervals over tasks against the rewrite without demos. No answer, label or reply is computed.

With the program's retrieval gate set (``askfirst.min_top_cosine``), the UNANSWERABLE follow-ups are scored too, and
three columns more say what the gate does with each query: ``compile.objective=gated_recall``'s score over all the
tasks, how many UNANSWERABLE follow-ups (right: "I don't know") and follow-ups with qrels (wrong) it stops, and how well
the queries' top cosine tells UNANSWERABLE follow-ups from ANSWERABLE ones at any threshold (ROC AUC, as ``askfirst
tune-threshold`` reports it).

    ASKFIRST_DATA_DIR=../shared/data python bench/rewrite_demos.py --config bench/askfirst_mtrag.yaml \\
        --set data.limit=null --set data.split=validation [--set program.compiled=runs/compile-…] [--demos 4 --seed 1 --seed 2] [--out rows.jsonl]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from askfirst.cli.options import resolve
from askfirst.datasets.jsonl import write_jsonl
from askfirst.datasets.mtrag import load_mtrag_rewrites
from askfirst.datasets.shared_data import shared_data_dir
from askfirst.datasets.splits import configured_questions
from askfirst.evaluation.retrieval_metrics import ndcg_at_k, recall_at_k
from askfirst.evaluation.stats import paired_bootstrap
from askfirst.optimizers.demo_selection import scored_with_demos
from askfirst.optimizers.feedback_metrics import RecallMetric
from askfirst.optimizers.gate_tuning import TOP_COSINE, separation
from askfirst.optimizers.rewrite_demos import drawn_rewrite_demos, gated_recall, rewrite_rankings, scored_follow_ups
from askfirst.session import open_session

METRICS = {"nDCG@5": lambda ranked, qrels: ndcg_at_k(ranked, qrels, 5), "Recall@10": lambda ranked, qrels: recall_at_k(ranked, qrels, 10)}


def scored(program, tasks: list, *, rewrite: bool = True) -> list[dict]:
    """Per task, the query searched, its ranking's metrics (``None`` without qrels) and what the gate does with it."""
    through_gate = program.config.min_top_cosine is not None
    rows = rewrite_rankings(program, tasks, rewrite=rewrite)
    return [{"id": row["id"], "query": row["query"], "answerability": task.get("answerability"), "qrels": bool(qrels := RecallMetric.relevant(task)),
             "top_cosine": row["top_cosine"],
             "stopped": row["gated"], "gated recall@10": gated_recall(row, task, through_gate=through_gate),
             **{name: metric(row["ranked"], qrels) if qrels else None for name, metric in METRICS.items()}}
            for row, task in zip(rows, tasks)]


def cell(rows: list[dict], base: list[dict], metric: str) -> str:
    """The mean of ``metric`` over the rows it applies to, and its paired difference from ``base``'s unless they are base."""
    pairs = [(r[metric], b[metric]) for r, b in zip(rows, base) if r[metric] is not None]
    mean = sum(value for value, _ in pairs) / len(pairs)
    if rows is base:
        return f"{mean:.3f}"
    diff, low, high = paired_bootstrap([value for value, _ in pairs], [value for _, value in pairs])
    return f"{mean:.3f} ({diff:+.3f} [{low:+.3f}, {high:+.3f}])"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config")
    parser.add_argument("--set", dest="set_", action="append", default=[])
    parser.add_argument("--demos", type=int, default=4, help="demonstrations per draw")
    parser.add_argument("--seed", type=int, action="append", help="a draw of --demos human rewrites per seed, as compile draws them")
    parser.add_argument("--out", type=Path, help="every row as JSONL")
    args = parser.parse_args()
    config = resolve(args.config, args.set_)
    session = open_session(config)
    try:
        program = session.program
        gate = program.config.min_top_cosine
        tasks = scored_follow_ups(configured_questions(config), unanswerable=gate is not None)
        configured = list(program.rewrite.demos)  # a compiled program's (program.compiled), or none
        pool = load_mtrag_rewrites(shared_data_dir(config.data.shared_data_dir)) if args.seed else []
        draws = {"rewrite, no demos": [],
                 **({f"rewrite, the compiled program's {len(configured)} demos": configured} if configured else {}),
                 **{f"rewrite, {args.demos} human demos drawn with seed {seed}": drawn_rewrite_demos(pool, k=args.demos, seed=seed)
                    for seed in args.seed or []}}
        variants = {"last turn": scored(program, tasks, rewrite=False),
                    **scored_with_demos(program.rewrite, draws, lambda _name: scored(program, tasks))}
    finally:
        session.close()
    base = variants["rewrite, no demos"]
    with_qrels = sum(r["qrels"] for r in base)
    gated = f", {len(tasks) - with_qrels} UNANSWERABLE ones without, and the retrieval gate at {gate}" if gate is not None else ""
    print(f"\n{with_qrels} follow-up tasks with qrels{gated} ({config.data.split or 'all'}); paired BCa 95% CIs against the rewrite "
          "without demos\n")
    columns = [*METRICS, *(["gated recall@10", "UNANSWERABLE stopped", "with qrels stopped", "gate AUC"] if gate is not None else [])]
    print("| query | " + " | ".join(columns) + " | queries unlike the undemonstrated rewrite's |")
    print("|---|" + "---|" * (len(columns) + 1))
    for name, rows in variants.items():
        cells = [cell(rows, base, metric) for metric in [*METRICS, *(["gated recall@10"] if gate is not None else [])]]
        if gate is not None:
            auc = separation(rows, TOP_COSINE)
            cells += [str(sum(r["stopped"] for r in rows if not r["qrels"])), str(sum(r["stopped"] for r in rows if r["qrels"])),
                      "-" if auc is None else f"{auc:.3f}"]
        moved = sum(r["query"] != b["query"] for r, b in zip(rows, base))
        print(f"| {name} | " + " | ".join(cells) + f" | {moved} |")
    if args.out:
        write_jsonl(args.out, ({"variant": name, **row} for name, rows in variants.items() for row in rows))


if __name__ == "__main__":
    main()
