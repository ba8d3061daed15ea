"""The askfirst program's unnamed-referent cue (``askfirst.referent_cue``), measured per answerability class on each
half of MTRAG-UN dev (no LM).

The cue (``askfirst.programs.askfirst.unnamed_referent``): a follow-up puts a definite determiner before a lower-case
word whose stem no earlier turn has ("the loan", "the animal"). This prints the share of each class it marks, so any
rule built on it is chosen on the training half and read on the other.

    ASKFIRST_DATA_DIR=../shared/data python bench/unnamed_referent_cue.py [--limit-validation 80]
    ASKFIRST_DATA_DIR=../shared/data python bench/unnamed_referent_cue.py --run runs/eval-…

The halves are the ones `askfirst tune-threshold --split train` (all tasks, shuffled, seed 0) and the 40-task
validation runs (the first 80 shuffled tasks' validation half) use.

``--topic-switch`` counts, on both whole halves and the demo, the follow-ups the topic-switch check
(``askfirst.programs.askfirst.topic_switch``) marks at several thresholds: the cue's words and a best MiniLM cosine to
every earlier user turn below the threshold, and lists them by cosine:

    ASKFIRST_DATA_DIR=../shared/data python bench/unnamed_referent_cue.py --topic-switch

``--run`` reads an askfirst eval run made without ``askfirst.referent_cue`` and gives the routes the program would
have taken with it: the cue is the program's last step before the responders and only turns an "I don't know" into a
clarifying question, so the routes (not the clarifications' text) follow from the run's own without an LM.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from askfirst.config import load_config
from askfirst.datasets.splits import configured_questions
from askfirst.evaluation.runner import read_finished
from askfirst.evaluation.scoring import score_prediction
from askfirst.evaluation.stats import paired_bootstrap
from askfirst.programs.common.conversation import history_text, question_and_history
from askfirst.programs.askfirst.unnamed_referent import unnamed_referents
from askfirst.programs.common.routes import ROUTES

CLASSES = ("ANSWERABLE", "PARTIAL", "UNANSWERABLE", "UNDERSPECIFIED")


def cue_words(conversation: list[dict], program) -> tuple[str, list[str]]:
    """The conversation's last turn and the words the cue marks in it, given the earlier turns as the program sees them
    (``program.history_turns`` of them, each cut as the LM is shown it, without role labels)."""
    question, history, _ = question_and_history(conversation, program)
    return question, unnamed_referents(question, history_text(history))


def shares(examples, program) -> dict[str, tuple[int, int]]:
    """``{class: (marked, total)}`` for each of ``CLASSES``, the conversations read with ``program``'s settings."""
    hits, total = Counter(), Counter()
    for example in examples:
        total[example.answerability] += 1
        hits[example.answerability] += bool(cue_words(example.conversation, program)[1])
    return {label: (hits[label], total[label]) for label in CLASSES}


def routes_with_cue(run_dir: Path) -> tuple[Counter, Counter, list[str]]:
    """``(routes, routes with the cue, the tasks it turns)``: Counters of ``(task id, expected route, route)`` over the
    run's finished tasks, and a line per task whose "I don't know" the cue turns into a clarifying question."""
    config = load_config(run_dir / "config.yaml")
    if config.program.kind != "askfirst" or config.askfirst.referent_cue or config.askfirst.mode != "ask_first":
        # the program consults the cue in ask_first mode only
        raise SystemExit(f"{run_dir}: not an askfirst run in ask_first mode without askfirst.referent_cue")
    examples = {e.id: e for e in configured_questions(config)}
    finished = read_finished(run_dir / "predictions.jsonl")
    before, after, turned = Counter(), Counter(), []
    for task_id, record in finished.items():  # a stopped run's finished tasks count too
        score = score_prediction(examples[task_id], record, k=config.program.evidence_k)
        route = score["route"]
        before[task_id, score["expected_route"], route] += 1
        if route == "idk":
            question, words = cue_words(examples[task_id].conversation, config.program)
            if words:
                route = "clarify"
                turned.append(f"{task_id} ({score['expected_route']}): {words} in {question!r}")
        after[task_id, score["expected_route"], route] += 1
    return before, after, turned


def print_run(run_dir: Path) -> None:
    before, after, turned = routes_with_cue(run_dir)
    print("| expected route | n | routes taken | with the cue |\n|---|---|---|---|")
    for expected in ROUTES:
        taken = [Counter(r for (_, e, r) in counts if e == expected) for counts in (before, after)]
        cells = [", ".join(f"{r} {c}" for r, c in t.most_common()) for t in taken]
        print(f"| {expected} | {sum(taken[0].values())} | {cells[0]} | {cells[1]} |")
    correct = [[float(e == r) for (_, e, r) in sorted(counts)] for counts in (before, after)]
    diff, low, high = paired_bootstrap(correct[1], correct[0])
    print(f"\nroute accuracy {sum(correct[0]) / len(correct[0]):.3f} -> {sum(correct[1]) / len(correct[1]):.3f} "
          f"({diff:+.3f} [{low:+.3f}, {high:+.3f}] paired); turned into a clarifying question:")
    print("\n".join(f"- {line}" for line in turned) or "- none")


def print_topic_switch(thresholds=(0.10, 0.125, 0.15, 0.20)) -> None:
    from askfirst.programs.askfirst.topic_switch import switched_referents
    from askfirst.retrieval.embedder import get_embedder

    mtrag = load_config(overrides=["data.questions=mtrag", "data.corpus=mtrag", "data.shuffle=true", "data.limit=null"])
    sets = {"train": (mtrag, "train"), "validation": (mtrag, "validation"), "demo": (load_config(overrides=["data.questions=demo"]), "all")}
    embed = get_embedder(mtrag.retriever.embedding_model).embed
    below = mtrag.askfirst.topic_switch_below
    print("| set | class | cue | " + " | ".join(f"cue, cosine < {t:g}" for t in thresholds) + " |")
    print("|---|---|---|" + "---|" * len(thresholds))
    marked = []
    for name, (config, split) in sets.items():
        counts = {label: Counter() for label in CLASSES}
        for example in configured_questions(config, split=split):
            question, history, _ = question_and_history(example.conversation, config.program)
            tally = counts[example.answerability]
            tally["n"] += 1
            # the program's own check; its record's similarity does not depend on the threshold given
            similarity = switched_referents(question, history, history_text(history), embed, below=below or 0.0)["similarity"]
            if similarity is None:  # no cue word (or no earlier user turn)
                continue
            tally["cue"] += 1
            for threshold in thresholds:
                tally[threshold] += similarity < threshold
            if similarity < max(thresholds):
                marked.append((similarity, f"{name} {example.id} ({example.answerability}, {similarity:.3f}): {question!r}"))
        for label in CLASSES:
            tally = counts[label]
            if tally["n"]:
                print(f"| {name} | {label} ({tally['n']}) | {tally['cue']} | " + " | ".join(str(tally[t]) for t in thresholds) + " |")
    print(f"\nmarked below {max(thresholds):g}, by cosine (askfirst.topic_switch_below is {below}):")
    print("\n".join(f"- {line}" for _, line in sorted(marked)) or "- none")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit-validation", type=int, default=80)
    parser.add_argument("--run", type=Path, help="an askfirst eval run without the cue: the routes it would have taken with it")
    parser.add_argument("--topic-switch", action="store_true", help="the topic-switch check's counts on both whole halves")
    args = parser.parse_args()
    if args.topic_switch:
        return print_topic_switch()
    if args.run:
        return print_run(args.run)
    base = ["data.questions=mtrag", "data.corpus=mtrag", "data.shuffle=true"]
    program = load_config(overrides=base).program
    halves = {"train (all tasks' training half)": configured_questions(load_config(overrides=[*base, "data.limit=null"]), split="train"),
              f"validation (first {args.limit_validation} tasks' other half)":
                  configured_questions(load_config(overrides=[*base, f"data.limit={args.limit_validation}"]), split="validation")}
    print("| half | " + " | ".join(CLASSES) + " |")
    print("|---|---|---|---|---|")
    for name, examples in halves.items():
        counts = shares(examples, program)
        print(f"| {name} | " + " | ".join(f"{counts[c][0]}/{counts[c][1]}" for c in CLASSES) + " |")


if __name__ == "__main__":
    main()
