"""The askfirst program's complete-answer responder without demonstrations and with MTRAG's reference answers as
demonstrations, drawn from the training half: how close its answers come to the held-out references.

Only the standalone rewrite (to search as the program does) and the responder run. For each ANSWERABLE task of the
config's split (the validation half), the program's standalone query is searched once with the hybrid retriever and
its first ``program.evidence_k`` passages are the evidence, as the program's simple stage shows them (no FAQ fusion,
re-ranker or escalation: those change the evidence, not the responder). The responder answers the task's last user turn
on that evidence, with the conversation so far, exactly as the program calls it when it routes to an answer.

Demonstrations: ``--demos`` ANSWERABLE tasks of the config's *training* half (``data.split=train``), seeded, each shown
with the first ``--demo-passages`` passages one hybrid search of its last user turn finds (a task only where a judged
passage is among them, and with a short conversation), its reference answer as the answer and the judged passages
shown as its citations.

Printed per variant: ROUGE-L F and MTRAG's lexical RB_agg against the reference (both as ``askfirst.evaluation``
computes them, unconditioned: every task here is ANSWERABLE and is answered), token recall of the reference, answer
words, citations of a judged passage, and replies that failed to parse; paired BCa intervals against no demos.

    ASKFIRST_DATA_DIR=../shared/data python bench/answer_demos.py --config bench/askfirst_mtrag.yaml \\
        --set data.limit=null --set runs_dir=… [--limit 40] [--demos 2] [--seed 0] [--out rows.jsonl]
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

import dspy

from askfirst.cli.options import resolve
from askfirst.datasets.jsonl import write_jsonl
from askfirst.datasets.splits import configured_questions
from askfirst.evaluation.mtrag_formulas import rb_agg_lexical, rouge_l_f, token_recall
from askfirst.evaluation.stats import paired_bootstrap
from askfirst.optimizers.demo_selection import interleaved, scored_with_demos
from askfirst.programs.common.conversation import format_passages, question_and_history
from askfirst.programs.common.robust import StepFailed
from askfirst.session import open_session

MAX_HISTORY_CHARS = 400  # a demonstration's conversation; every task's own is shown in full


def reference_demos(session, tasks: list, *, k: int, passages: int, seed: int) -> list[dspy.Example]:
    """``k`` ANSWERABLE tasks of ``tasks`` (shuffled with ``seed``; one of each collection before a second of any) as
    the responder's demonstrations."""
    program = session.program
    order = [t for t in tasks if t.get("answerability") == "ANSWERABLE" and t.reference]
    random.Random(seed).shuffle(order)
    shown_demos = []
    for task in order:
        question, history, _ = question_and_history(task.conversation, program.program_config)
        shown = session.resources.search([question], passages)[:passages]
        judged = [p.passage_id for p in shown if p.doc_id in (task.get("qrels") or {})]
        if len(history) <= MAX_HISTORY_CHARS and judged:
            shown_demos.append((task.get("collection"), dspy.Example(
                conversation_history=history, question=question, answer=task.reference, cited_ids=judged,
                passages=format_passages(shown, max_chars=program.program_config.passage_chars))))
    return [example for _, example in interleaved(shown_demos, key=lambda pair: pair[0])[:k]]


def held_out_inputs(session, tasks: list, *, limit: int | None) -> list[dict]:
    """Per ANSWERABLE task with a reference: the responder's inputs (the evidence's ids among them), the evidence's texts, and
    the judged ids."""
    program = session.program
    rows = []
    for task in [t for t in tasks if t.get("answerability") == "ANSWERABLE" and t.reference][:limit]:
        question, history, _ = question_and_history(task.conversation, program.program_config)
        evidence = program.resources.search([program.search_query(question, history)], program.program_config.evidence_k)
        rows.append({"task": task, "texts": [p.text for p in evidence],
                     "judged": {p.passage_id for p in evidence if p.doc_id in (task.get("qrels") or {})},
                     "inputs": {"question": question, "conversation_history": history, "passage_ids": [p.passage_id for p in evidence],
                                "passages_text": format_passages(evidence, max_chars=program.program_config.passage_chars)}})
    return rows


def scored(program, row: dict) -> dict:
    """The responder's answer on ``row`` and its scores against the task's reference (zeros when it failed to parse)."""
    reference = row["task"].reference
    try:
        reply = program.responders(route="answer", **row["inputs"])
    except StepFailed:
        return {"id": row["task"].id, "failed": True, "answer": "", "rl_f": 0.0, "rb_agg": 0.0, "recall": 0.0, "words": 0, "judged_cited": False}
    answer = reply.answer
    return {"id": row["task"].id, "failed": False, "answer": answer, "rl_f": rouge_l_f(answer, reference),
            "rb_agg": rb_agg_lexical(answer, reference, row["texts"]), "recall": token_recall(answer, reference),
            "words": len(answer.split()), "judged_cited": bool(row["judged"] & set(reply.citations))}


def report(variants: dict[str, list[dict]]) -> None:
    base = variants["no demos"]
    print(f"\n{len(base)} ANSWERABLE held-out tasks\n")
    print("| variant | RL_F [paired 95% CI vs no demos] | RB_agg lexical [paired CI] | reference recall | words | cites a judged passage | failed |")
    print("|---|---|---|---|---|---|---|")
    for name, rows in variants.items():
        cells = []
        for key in ("rl_f", "rb_agg"):
            values = [r[key] for r in rows]
            cell = f"{sum(values) / len(values):.3f}"
            if rows is not base:
                diff, low, high = paired_bootstrap(values, [r[key] for r in base])
                cell += f" ({diff:+.3f} [{low:+.3f}, {high:+.3f}])"
            cells.append(cell)
        n = len(rows)
        cells += [f"{sum(r['recall'] for r in rows) / n:.3f}", f"{sum(r['words'] for r in rows) / n:.1f}",
                  str(sum(r["judged_cited"] for r in rows)), str(sum(r["failed"] for r in rows))]
        print(f"| {name} | " + " | ".join(cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config")
    parser.add_argument("--set", dest="set_", action="append", default=[])
    parser.add_argument("--limit", type=int, help="the first N ANSWERABLE held-out tasks (default: all)")
    parser.add_argument("--demos", type=int, default=2, help="demonstrations per draw")
    parser.add_argument("--demo-passages", type=int, default=3, help="passages each demonstration shows")
    parser.add_argument("--seed", type=int, action="append", help="one draw of demonstrations per seed (default: 0)")
    parser.add_argument("--out", type=Path, help="every row as JSONL")
    args = parser.parse_args()
    config = resolve(args.config, args.set_)
    if config.data.split == "train" or config.program.kind != "askfirst":
        parser.error("run the askfirst program on a held-out split (data.split=validation)")
    session = open_session(config, update_index=False)
    try:
        program = session.program
        if program.responders.complete.demos:
            parser.error("the config's program already has responder demos (program.compiled); compare against none")
        rows = held_out_inputs(session, configured_questions(config), limit=args.limit)
        training = configured_questions(config, split="train")
        draws = {"no demos": [], **{f"{args.demos} references, seed {seed}": reference_demos(
            session, training, k=args.demos, passages=args.demo_passages, seed=seed) for seed in args.seed or [0]}}

        def score(name: str) -> list[dict]:
            results = []
            for row in rows:
                results.append(scored(program, row))
                print(f"{name} [{len(results)}/{len(rows)}] {results[-1]['rl_f']:.3f}", flush=True)
            return results

        variants = scored_with_demos(program.responders.complete, draws, score)
    finally:
        session.close()
    report(variants)
    if args.out:
        write_jsonl(args.out, ({"variant": name, **row} for name, rows in variants.items() for row in rows))


if __name__ == "__main__":
    main()
