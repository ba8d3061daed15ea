"""The askfirst program's evidence assessment without demonstrations and with labelled ones of every answerability
label, drawn from the training half: which label it gives, on the inputs an eval run gave it.

Only the assessment step runs (on its configured LM, with the labels' log-probabilities as the program asks for them).
Its inputs are rebuilt from an eval run's records: the conversation, the query the program searched
(``standalone_query``) and the passages it assessed (the record's evidence), for each task the program's assessment
LM call labelled (``answering_sentences`` recorded) and escalation did not re-search. The run without demos needs no
new LM call where DSPy's cache holds the run's own (the same ``runs_dir``).

Demonstrations: ``--per-label`` tasks of each label of the config's *training* half (``data.split=train``), seeded,
each shown with the first ``--demo-passages`` passages one hybrid search of its last user turn finds (an ANSWERABLE or
PARTIAL task only where a judged passage is among them). Their outputs are what the labels say: the label, and for
ANSWERABLE and PARTIAL the sentence of a judged passage nearest the reference answer (ROUGE-L) as the answering
sentence; none for UNANSWERABLE and UNDERSPECIFIED. ``asked_about`` is the question's first five content words (no
function or quantity words, as the collection check reads them): a demo without it would show the LM DSPy's "Not
supplied for this particular example." as that field's value, which the key-term check would then look for.

Printed: labels given per expected label for each variant, how many tasks each variant labels right with a paired
BCa interval against no demos, the ANSWERABLE tasks labelled UNANSWERABLE (the "I don't know"s the label makes
wrongly) and the UNANSWERABLE ones labelled so, and P(answerable)'s ROC AUC (ANSWERABLE and PARTIAL against
UNANSWERABLE). No route, reply or later check is computed: a label is what the program's router starts from.

    ASKFIRST_DATA_DIR=../shared/data python bench/assessment_demos.py --config bench/askfirst_mtrag.yaml \\
        --set data.limit=null --set runs_dir=… --run <eval run of the validation half> [--per-label 1] [--seed 0] [--out rows.jsonl]
"""

from __future__ import annotations

import argparse
import random
import re
from collections import Counter
from pathlib import Path

import dspy
from rouge_score import rouge_scorer

from askfirst.cli.options import resolve
from askfirst.config import load_config
from askfirst.datasets.jsonl import write_jsonl
from askfirst.datasets.splits import configured_questions
from askfirst.evaluation.runner import read_finished
from askfirst.evaluation.stats import paired_bootstrap
from askfirst.optimizers.demo_selection import scored_with_demos
from askfirst.programs.askfirst.absent_terms import function_words
from askfirst.programs.askfirst.key_terms import QUANTITY_WORDS
from askfirst.programs.common.answerability import LABELS, label_probability, label_scoring_config
from askfirst.programs.common.conversation import format_passages, question_and_history
from askfirst.programs.common.robust import StepFailed, call_predictor
from askfirst.session import open_session

MAX_HISTORY_CHARS = 400  # a demonstration's conversation; the step reads every task's own as well
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def asked_about(question: str) -> str:
    """The question's first five content words, in its own spelling."""
    words = [w for w in re.findall(r"[\w'-]+", question) if w.lower() not in function_words() and w.lower() not in QUANTITY_WORDS]
    return " ".join(words[:5])


def nearest_sentence(reference: str, passages, judged: set[str]) -> str | None:
    """``[id] sentence``: the sentence of a judged passage among ``passages`` with the best ROUGE-L F against the reference."""
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    best = max(((scorer.score(reference, s)["rougeL"].fmeasure, p.passage_id, s) for p in passages if p.passage_id in judged
                for s in _SENTENCE.split(p.text) if s.strip()), default=None)
    return None if best is None or best[0] == 0 else f"[{best[1]}] {best[2].strip()}"


def labelled_demos(session, tasks: list, *, per_label: int, passages: int, seed: int) -> list[dspy.Example]:
    """``per_label`` demonstrations of each label from ``tasks`` (shuffled with ``seed``), labels interleaved."""
    program = session.program
    rng = random.Random(seed)
    order = list(tasks)
    rng.shuffle(order)
    chosen: dict[str, list[dspy.Example]] = {label: [] for label in LABELS}
    for task in order:
        label = task.get("answerability")
        if label not in chosen or len(chosen[label]) >= per_label:
            continue
        question, history, _ = question_and_history(task.conversation, program.program_config)
        if len(history) > MAX_HISTORY_CHARS:
            continue
        shown = session.resources.search([question], passages)[:passages]
        outputs = {"answering_sentences": [], "label": label, "confidence": 0.9, "asked_about": asked_about(question)}
        if label in ("ANSWERABLE", "PARTIAL"):
            sentence = nearest_sentence(task.reference, shown, set(task.get("qrels") or {}))
            if sentence is None:
                continue
            outputs["answering_sentences"] = [sentence]
        chosen[label].append(dspy.Example(conversation_history=history, question=question,
                                          passages=format_passages(shown, max_chars=program.program_config.passage_chars), **outputs))
    return [demo for group in zip(*chosen.values()) for demo in group]


def assessed_inputs(session, tasks: list, records: dict[str, dict]) -> list[tuple]:
    """``(task, inputs)`` for each task whose record shows the assessment's own LM call on un-escalated evidence."""
    program, store = session.program, session.store
    rows = []
    for task in tasks:
        rec = records.get(task.id)
        extras = (rec or {}).get("extras") or {}
        if rec is None or extras.get("answering_sentences") is None or extras.get("escalated"):
            continue
        _, history, _ = question_and_history(task.conversation, program.program_config)
        found = store.get_passages(rec["retrieved"])
        evidence = [found[pid] for pid in rec["retrieved"] if pid in found]
        rows.append((task, {"conversation_history": history, "question": extras["standalone_query"],
                            "passages": format_passages(evidence, max_chars=program.program_config.passage_chars)}))
    return rows


def assess(program, inputs: dict) -> tuple[str, float | None]:
    """The assessment's label and P(answerable) on ``inputs`` (``("failed", None)`` after its retries)."""
    config = label_scoring_config(program.assess, enabled=program.program_config.label_logprobs)
    try:
        out = call_predictor(program.assess, "askfirst_assess", retries=program.retries, config=config, **inputs)
    except StepFailed:
        return "failed", None
    return out.label, label_probability(out, out.label, generated=out.confidence)[1]


def auc(rows: list[dict]) -> float | None:
    """P(answerable)'s ROC AUC, ANSWERABLE and PARTIAL tasks against UNANSWERABLE ones (ties count half)."""
    pos = [r["p"] for r in rows if r["gold"] in ("ANSWERABLE", "PARTIAL") and r["p"] is not None]
    neg = [r["p"] for r in rows if r["gold"] == "UNANSWERABLE" and r["p"] is not None]
    if not pos or not neg:
        return None
    return sum((a > b) + 0.5 * (a == b) for a in pos for b in neg) / (len(pos) * len(neg))


def report(variants: dict[str, list[dict]]) -> None:
    base = variants["no demos"]
    golds = [g for g in LABELS if any(r["gold"] == g for r in base)]
    print(f"\n{len(base)} tasks the assessment labelled; labels given per expected label\n")
    print("| variant | " + " | ".join(golds) + " | right [paired 95% CI vs no demos] | ANSWERABLE as UNANSWERABLE | "
          "UNANSWERABLE as UNANSWERABLE | P(answerable) AUC |")
    print("|---|" + "---|" * (len(golds) + 4))
    for name, rows in variants.items():
        cells = []
        for gold in golds:
            given = Counter(r["label"] for r in rows if r["gold"] == gold)
            cells.append(", ".join(f"{label[:4]} {n}" for label, n in given.most_common()))
        right = [float(r["label"] == r["gold"]) for r in rows]
        total = f"{int(sum(right))}"
        if rows is not base:
            diff, low, high = paired_bootstrap(right, [float(r["label"] == r["gold"]) for r in base])
            total += f" ({diff:+.3f} [{low:+.3f}, {high:+.3f}])"
        wrong_idk = sum(r["gold"] == "ANSWERABLE" and r["label"] == "UNANSWERABLE" for r in rows)
        right_idk = sum(r["gold"] == "UNANSWERABLE" and r["label"] == "UNANSWERABLE" for r in rows)
        score = auc(rows)
        print(f"| {name} | " + " | ".join(cells) + f" | {total} | {wrong_idk} | {right_idk} | "
              + ("-" if score is None else f"{score:.3f}") + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config")
    parser.add_argument("--set", dest="set_", action="append", default=[])
    parser.add_argument("--run", type=Path, required=True, help="an eval run of the askfirst program on the held-out half")
    parser.add_argument("--per-label", type=int, default=1, help="demonstrations of each label per draw")
    parser.add_argument("--demo-passages", type=int, default=3, help="passages each demonstration shows")
    parser.add_argument("--seed", type=int, action="append", help="one draw of demonstrations per seed (default: 0)")
    parser.add_argument("--out", type=Path, help="every row as JSONL")
    args = parser.parse_args()
    config = resolve(args.config, args.set_)
    ran = load_config(args.run / "config.yaml")
    if ran.data.split == "train" or ran.program.kind != "askfirst":
        parser.error(f"{args.run} is not a run of the askfirst program on held-out questions (split {ran.data.split})")
    records = read_finished(args.run / "predictions.jsonl")
    session = open_session(config, update_index=False)
    try:
        program = session.program
        if program.assess.demos:
            parser.error("the config's program already has assessment demos (program.compiled); compare against none")
        rows = assessed_inputs(session, configured_questions(ran), records)
        training = configured_questions(config, split="train")
        draws = {"no demos": [], **{f"{args.per_label} of each label, seed {seed}": labelled_demos(
            session, training, per_label=args.per_label, passages=args.demo_passages, seed=seed) for seed in args.seed or [0]}}

        def score(name: str) -> list[dict]:
            results = []
            for task, inputs in rows:
                label, p = assess(program, inputs)
                results.append({"id": task.id, "gold": task.get("answerability"), "label": label, "p": p,
                                "run_label": records[task.id].get("label")})
            print(f"{name}: {len(draws[name])} demos, {sum(r['label'] == r['gold'] for r in results)} of {len(results)} right", flush=True)
            return results

        variants = scored_with_demos(program.assess, draws, score)
    finally:
        session.close()
    report(variants)
    if args.out:
        write_jsonl(args.out, ({"variant": name, **row} for name, results in variants.items() for row in results))


if __name__ == "__main__":
    main()
