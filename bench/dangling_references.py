"""The askfirst program's dangling-reference check (``askfirst.dangling_reference``) and first-turn referent cue
(``askfirst.first_turn_cue_words``), counted per answerability class on questions asked with no earlier turn (no LM);
with ``--follow-ups``, the follow-up check (``askfirst.dangling_follow_up``) on the follow-ups.

The check (``askfirst.programs.askfirst.unnamed_referent.dangling_references``): a first question with a third-person
pronoun that nothing before it could stand for, or a demonstrative ("this state library"), is asked about before the
assessment. It acts on first turns only, and makes no LM call, so a set's marked questions are exactly the ones whose
route it turns into a clarification, and every other question takes the path it took without it.

    ASKFIRST_DATA_DIR=../shared/data python bench/dangling_references.py [--show 5] [--cue 3]

With ``--cue N`` it counts the first-turn referent cue instead (``bare_referents`` with ``max_words`` N): a question
with no name, no number and one "the X" among at most N content words ("When did the investigation begin?"). The
program consults it only for a question headed for "I don't know", which it then asks about instead, so a marked
question's route changes only when it was "I don't know".

With ``--follow-ups`` it counts the follow-ups' demonstratives that name a thing no earlier turn has
(``unseen_demonstratives``: "this tricolor national flag" after turns about Medicare), reading the earlier turns as the
program does (the newest ``program.history_turns``, each cut as the program cuts it). Like the first-turn check it acts
before the assessment, so a marked follow-up's route is a clarification and every other one's is unchanged.

Sets: the demo; MTRAG-UN dev's first turns, all of them, on the training half (all tasks) and on the 40-task
validation half the program's runs use (the first 80 shuffled tasks' other half); URASys's SQuAD2 ambiguous questions
(each expects a clarification) and its plain SQuAD2 ones (answerable and unanswerable, written beside their
paragraph); AmbigNQ, whose questions are lower-cased search queries, so that a name before a pronoun does not show; MTRAG's synthetic
tasks, none of them UNDERSPECIFIED, so every question marked there is one the check should have left alone.
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections import Counter, defaultdict

from askfirst.config import load_config
from askfirst.datasets.errors import DataError
from askfirst.datasets.splits import configured_questions
from askfirst.programs.askfirst.unnamed_referent import bare_referents, dangling_references, unseen_demonstratives
from askfirst.programs.common.conversation import history_text, question_and_history


def sets(*, follow_ups: bool = False) -> dict[str, list]:
    """Each measured set's first-turn questions (with ``follow_ups``, its follow-ups instead), by name (a set whose data is
    missing is skipped with a line saying so)."""
    mtrag = ["data.questions=mtrag", "data.corpus=mtrag", "data.shuffle=true"]
    specs = {
        "demo": (["data.questions=demo"], "all"),
        "MTRAG-UN dev, all tasks": ([*mtrag, "data.limit=null"], "all"),
        "MTRAG-UN dev, training half": ([*mtrag, "data.limit=null"], "train"),
        "MTRAG-UN dev, validation half (first 80 tasks)": ([*mtrag, "data.limit=80"], "validation"),
        "URASys SQuAD2 ambiguous": (["data.questions=urasys:squad2_ambiguous"], "all"),
        "URASys SQuAD2": (["data.questions=urasys:squad2"], "all"),
        "AmbigNQ": (["data.questions=ambignq"], "all"),
        "MTRAG synthetic": (["data.questions=mtrag_synthetic"], "all"),
    }
    found = {}
    for name, (overrides, split) in specs.items():
        try:
            examples = configured_questions(load_config(overrides=overrides), split=split)
        except DataError as exc:  # a set missing from this machine is reported, not fatal
            print(f"skipped {name}: {exc}", file=sys.stderr)
            continue
        found[name] = [e for e in examples if (sum(t["role"] == "user" for t in e.conversation) > 1) == follow_ups]
    return found


def unseen_in_follow_up(conversation: list[dict], program) -> list[str]:
    """The follow-up check's words for the conversation's last turn, given the earlier turns ``program`` (the program
    section of the config) has the program read."""
    question, history, _ = question_and_history(conversation, program)
    return unseen_demonstratives(question, history_text(history))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", type=int, default=3, help="marked questions to print per set and class")
    parser.add_argument("--cue", type=int, default=0, metavar="N", help="count the first-turn referent cue with N words instead")
    parser.add_argument("--follow-ups", action="store_true", help="count the follow-up check on the follow-ups instead")
    args = parser.parse_args()
    if args.follow_ups:
        marks = functools.partial(unseen_in_follow_up, program=load_config().program)
    else:
        marks = (lambda c: bare_referents(c[-1]["content"], max_words=args.cue)) if args.cue else (lambda c: dangling_references(c[-1]["content"]))
    print(f"| set | {'follow-ups' if args.follow_ups else 'first turns'} | marked, per class |\n|---|---|---|")
    shown = []
    for name, examples in sets(follow_ups=args.follow_ups).items():
        hits, total, marked = Counter(), Counter(), defaultdict(list)
        for example in examples:
            label = example.get("answerability") or "?"
            total[label] += 1
            words = marks(example.conversation)
            if words:
                hits[label] += 1
                marked[label].append(f"{example.id}: {words} in {example.conversation[-1]['content']!r}")
        print(f"| {name} | {len(examples)} | " + ", ".join(f"{label} {hits[label]}/{n}" for label, n in sorted(total.items())) + " |")
        shown += [f"- {name}, {label}: {line}" for label, lines in sorted(marked.items()) for line in lines[: args.show]]
    print("\n".join(["", *shown]))


if __name__ == "__main__":
    main()
