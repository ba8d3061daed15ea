"""The askfirst program's collection check (``askfirst.absent_terms``), measured per answerability class (no LM).

The check (``askfirst.programs.askfirst.absent_terms``) cuts the user's last turn into parts; a part with N or more
content words the collection does not have is uncovered. No part covered: the program says "I don't know" without an
LM call; some: an answerable assessment becomes PARTIAL. The program also counts a word as known when a retrieved
passage has its stem; without retrieval this script counts a word known when the collection has it or a common
inflection of its stem (``forms``: what the program's BM25 lookup sees, so an upper bound on how often the check
fires) or has its stem (``stem``: a lower bound). It prints, for each half and each class, the tasks with no part covered and with some.

    ASKFIRST_DATA_DIR=../shared/data python bench/absent_terms.py [--min-words 2] [--limit-validation 80]
    python bench/absent_terms.py --demo

The halves are the ones `askfirst tune-threshold --split train` (all tasks, shuffled, seed 0) and the 40-task
validation runs (the first 80 shuffled tasks' validation half) use.
"""

from __future__ import annotations

import argparse
from collections import Counter

from askfirst.config import load_config
from askfirst.datasets.splits import configured_corpus, configured_questions
from askfirst.programs.askfirst.absent_terms import coverage, word_forms
from askfirst.programs.askfirst.key_terms import stem
from askfirst.retrieval.bm25 import tokenize

CLASSES = ("ANSWERABLE", "PARTIAL", "UNANSWERABLE", "UNDERSPECIFIED")


def vocabularies(config) -> tuple[set[str], set[str]]:
    """The collection's tokens as written, and their stems."""
    exact = {t for doc in configured_corpus(config) for t in tokenize(f"{doc.title} {doc.text}")}
    return exact, {stem(t) for t in exact}


def verdicts(examples, known, *, min_words: int) -> dict[str, Counter]:
    """``{class: Counter(verdict)}`` over ``examples`` (the check on each last user turn)."""
    out = {label: Counter() for label in CLASSES}
    for example in examples:
        out.setdefault(example.answerability, Counter())[coverage(example.conversation[-1]["content"], known, min_words=min_words)["verdict"]] += 1
    return out


def table(halves: dict, exact: set[str], stems: set[str], *, min_words: int) -> None:
    known = {"forms": lambda t: any(form in exact for form in word_forms(t)), "stem": lambda t: stem(t) in stems}
    print(f"min_words={min_words}; each cell: no part covered / some parts uncovered / tasks")
    print("| half | lookup | " + " | ".join(CLASSES) + " |")
    print("|---|---|" + "---|" * len(CLASSES))
    for name, examples in halves.items():
        for lookup, check in known.items():
            counts = verdicts(examples, check, min_words=min_words)
            cells = [f"{c['none']} / {c['some']} / {sum(c.values())}" for c in (counts[label] for label in CLASSES)]
            print(f"| {name} | {lookup} | " + " | ".join(cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--min-words", type=int, default=2)
    parser.add_argument("--limit-validation", type=int, default=80)
    parser.add_argument("--demo", action="store_true", help="the shipped demo set and corpus instead of MTRAG-UN dev")
    args = parser.parse_args()
    if args.demo:
        config = load_config(overrides=["data.questions=demo", "data.corpus=demo"])
        table({"demo": configured_questions(config)}, *vocabularies(config), min_words=args.min_words)
        return
    base = ["data.questions=mtrag", "data.corpus=mtrag", "data.shuffle=true"]
    train = load_config(overrides=[*base, "data.limit=null"])
    halves = {"train (all tasks' training half)": configured_questions(train, split="train"),
              f"validation (first {args.limit_validation} tasks' other half)":
                  configured_questions(load_config(overrides=[*base, f"data.limit={args.limit_validation}"]), split="validation")}
    table(halves, *vocabularies(train), min_words=args.min_words)


if __name__ == "__main__":
    main()
