"""A lexical cue for MTRAG-UN's UNDERSPECIFIED tasks, measured per answerability class on each half (no LM).

Most of MTRAG-UN's UNDERSPECIFIED tasks refer to one thing by its kind only - "the actor's approach to fitness", "this
language", "the hurricane's impact" - with no earlier turn naming it. The cue: a definite determiner (the, this, that,
these, those) before a lower-case word (a proper noun names its thing) whose first five letters appear in no earlier
turn. It is the candidate the askfirst program's LM check (``askfirst.referent_check``) was meant to beat; this prints
the share of each class it marks, so any rule built on it is chosen on the training half and read on the other.

    ASKFIRST_DATA_DIR=../shared/data python bench/unnamed_referent_cue.py [--limit-validation 80]

The halves are the ones `askfirst tune-threshold --split train` (all tasks, shuffled, seed 0) and the 40-task
validation runs (the first 80 shuffled tasks' validation half) use.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter

from askfirst.config import load_config
from askfirst.datasets.splits import configured_questions

_DEFINITE = re.compile(r"\b(this|that|these|those|the)\s+((?:[a-z][a-z\-]*\s+){0,2}?)([a-z][a-z\-]+)(?:'s)?\b", re.IGNORECASE)
CLASSES = ("ANSWERABLE", "PARTIAL", "UNANSWERABLE", "UNDERSPECIFIED")
_GENERAL = frozenset("same other following first last only best most way one ones time case thing things question above below information".split())


def unnamed_referents(conversation: list[dict]) -> list[str]:
    """The words the last user turn puts after a definite determiner that no earlier turn mentions (its first five letters)."""
    last = conversation[-1]["content"]
    earlier = " ".join(t["content"] for t in conversation[:-1]).lower()
    found = []
    for match in _DEFINITE.finditer(last):
        head = match.group(3)
        if head[0].isupper() or head.lower() in _GENERAL:
            continue
        if not re.search(r"\b" + re.escape(head[:5].lower()), earlier):
            found.append(head)
    return found


def shares(examples) -> dict[str, tuple[int, int]]:
    """``{class: (marked, total)}`` for each of ``CLASSES``."""
    marked, total = Counter(), Counter()
    for example in examples:
        total[example.answerability] += 1
        marked[example.answerability] += bool(unnamed_referents(example.conversation))
    return {label: (marked[label], total[label]) for label in CLASSES}


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
