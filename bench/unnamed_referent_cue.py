"""The askfirst program's unnamed-referent cue (``askfirst.referent_cue``), measured per answerability class on each
half of MTRAG-UN dev (no LM).

The cue (``askfirst.programs.askfirst.unnamed_referent``): a follow-up puts a definite determiner before a lower-case
word whose stem no earlier turn has ("the loan", "the animal"). This prints the share of each class it marks, so any
rule built on it is chosen on the training half and read on the other.

    ASKFIRST_DATA_DIR=../shared/data python bench/unnamed_referent_cue.py [--limit-validation 80]

The halves are the ones `askfirst tune-threshold --split train` (all tasks, shuffled, seed 0) and the 40-task
validation runs (the first 80 shuffled tasks' validation half) use.
"""

from __future__ import annotations

import argparse
from collections import Counter

from askfirst.config import load_config
from askfirst.datasets.splits import configured_questions
from askfirst.programs.askfirst.unnamed_referent import unnamed_referents

CLASSES = ("ANSWERABLE", "PARTIAL", "UNANSWERABLE", "UNDERSPECIFIED")


def marked(conversation: list[dict]) -> bool:
    """Whether the cue marks the conversation's last turn, given every earlier turn."""
    return bool(unnamed_referents(conversation[-1]["content"], " ".join(t["content"] for t in conversation[:-1])))


def shares(examples) -> dict[str, tuple[int, int]]:
    """``{class: (marked, total)}`` for each of ``CLASSES``."""
    hits, total = Counter(), Counter()
    for example in examples:
        total[example.answerability] += 1
        hits[example.answerability] += marked(example.conversation)
    return {label: (hits[label], total[label]) for label in CLASSES}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit-validation", type=int, default=80)
    args = parser.parse_args()
    base = ["data.questions=mtrag", "data.corpus=mtrag", "data.shuffle=true"]
    halves = {"train (all tasks' training half)": configured_questions(load_config(overrides=[*base, "data.limit=null"]), split="train"),
              f"validation (first {args.limit_validation} tasks' other half)":
                  configured_questions(load_config(overrides=[*base, f"data.limit={args.limit_validation}"]), split="validation")}
    print("| half | " + " | ".join(CLASSES) + " |")
    print("|---|---|---|---|---|")
    for name, examples in halves.items():
        counts = shares(examples)
        print(f"| {name} | " + " | ".join(f"{counts[c][0]}/{counts[c][1]}" for c in CLASSES) + " |")


if __name__ == "__main__":
    main()
