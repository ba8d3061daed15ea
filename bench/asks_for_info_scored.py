"""Can the offline judge LM's label probabilities, rather than the verdict it writes, tell a clarification that asks for
one of a question's ``info`` items from one that does not? Read against the hand-labelled replies of
``bench/asks_for_info_labels.jsonl`` (see ``bench/asks_for_info_judge.py``, which checks the written verdict).

Each reply is judged once with a two-label verdict (``ASKS`` / ``DOES_NOT_ASK``) whose probability is measured from the
label's log-probabilities, as the askfirst program measures P(answerable). Two instructions: ``shipped`` is the eval
judge's (``JudgeAsksForInfo``), ``which`` names what the items of this set are (which person, thing, time or place)
and the replies that do not ask. Printed: the written verdicts' agreement; the ROC AUC of P(ASKS) against the labels;
for how many questions the asking reply has the higher P(ASKS) of the two; and the agreement of a threshold on P(ASKS)
chosen leaving each question out (its two replies are judged with the threshold that does best on the other
questions'), so no reply is judged by a threshold fitted to it.

    ASKFIRST_DATA_DIR=../shared/data python bench/asks_for_info_scored.py --instruction which

A judge LM that does not report label probabilities (any but the in-process llama.cpp models) is refused.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Literal

import dspy

from asks_for_info_judge import HERE, labelled_questions, read_labels
from askfirst.config import load_config
from askfirst.evaluation.stats import proportion_ci
from askfirst.lm.factory import configure_dspy
from askfirst.programs.common.answerability import label_distribution, label_scoring_config
from askfirst.programs.common.robust import call_predictor
from askfirst.signatures.ambiguity_judges import JudgeAsksForInfo

VERDICTS = ["ASKS", "DOES_NOT_ASK"]
INSTRUCTIONS = {
    "shipped": JudgeAsksForInfo.__doc__,
    "which": """A user asked an unclear question, and the assistant replied. Decide whether the reply asks the user to say
    which person, thing, time or place they mean, where that is one of the missing pieces of information listed.
    A reply that gives an answer, refuses, says it does not know, or asks about the answer's format does not.""",
}


class ScoredAsksForInfo(dspy.Signature):
    """(The instruction is one of ``INSTRUCTIONS``, set with ``with_instructions``.)"""

    question: str = dspy.InputField()
    missing_information: str = dspy.InputField(desc="What a good clarifying question would ask for, one per line")
    reply: str = dspy.InputField()
    verdict: Literal["ASKS", "DOES_NOT_ASK"] = dspy.OutputField()


def judged(config, labels: list[dict], instruction: str) -> list[dict]:
    """Each label with the written ``verdict`` and ``p_asks`` from the verdict's log-probabilities."""
    questions = labelled_questions(config, labels)
    configure_dspy(config)
    judge = dspy.Predict(ScoredAsksForInfo.with_instructions(INSTRUCTIONS[instruction]))
    scoring = label_scoring_config(judge, enabled=True)
    if scoring is None:
        raise SystemExit(f"{(config.judge_lm or config.lm).model} reports no label probabilities")
    rows = []
    for row in labels:
        example = questions[row["id"]]
        out = call_predictor(judge, "asks_for_info_scored", retries=1, config=scoring, question=example.conversation[-1]["content"],
                             missing_information="\n".join(example.clarification_options), reply=row["reply"])
        dist = label_distribution(out, VERDICTS)
        rows.append(row | {"verdict": out.verdict == "ASKS", "p_asks": dist["ASKS"] if dist else None})
    return rows


def best_threshold(rows: list[dict]) -> float:
    """The P(ASKS) threshold (one of the values seen) at which the most of ``rows`` are judged as labelled."""
    return max(sorted({r["p_asks"] for r in rows}), key=lambda t: sum((r["p_asks"] >= t) == r["asks"] for r in rows))


def leave_one_question_out(rows: list[dict]) -> int:
    """How many replies a threshold chosen on the other questions' replies judges as labelled."""
    right = 0
    for qid in {r["id"] for r in rows}:
        threshold = best_threshold([r for r in rows if r["id"] != qid])
        right += sum((r["p_asks"] >= threshold) == r["asks"] for r in rows if r["id"] == qid)
    return right


def pairs_ranked(rows: list[dict]) -> tuple[int, int]:
    """``(questions whose asking reply has the higher P(ASKS), questions with one reply of each label)``."""
    by_question: dict[str, dict[bool, float]] = {}
    for r in rows:
        by_question.setdefault(r["id"], {})[r["asks"]] = r["p_asks"]
    pairs = [p for p in by_question.values() if len(p) == 2]
    return sum(p[True] > p[False] for p in pairs), len(pairs)


def auc(rows: list[dict]) -> float:
    from scipy.stats import mannwhitneyu

    asking = [r["p_asks"] for r in rows if r["asks"]]
    others = [r["p_asks"] for r in rows if not r["asks"]]
    return float(mannwhitneyu(asking, others).statistic) / (len(asking) * len(others))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default=str(HERE / "askfirst_squad2_ambiguous.yaml"), help="Its lm / judge_lm judge.")
    parser.add_argument("--labels", default=str(HERE / "asks_for_info_labels.jsonl"))
    parser.add_argument("--instruction", choices=sorted(INSTRUCTIONS), default="shipped")
    parser.add_argument("--set", action="append", default=[], help="A config override, e.g. runs_dir=…")
    args = parser.parse_args()
    config = load_config(Path(args.config), overrides=args.set)
    rows = [r for r in judged(config, read_labels(Path(args.labels)), args.instruction) if r["p_asks"] is not None]
    n = len(rows)

    def share(hits: int) -> str:
        low, high = proportion_ci(hits, n)
        return f"{hits}/{n} = {hits / n:.2f} [{low:.2f}, {high:.2f}]"

    print(f"judge: {(config.judge_lm or config.lm).model}, instruction {args.instruction!r}\n")
    ranked, pairs = pairs_ranked(rows)
    print("| written verdict agrees | P(ASKS) AUC | asking reply ranked first | threshold left out per question agrees | P(ASKS) range |")
    print("|---|---|---|---|---|")
    print(f"| {share(sum(r['verdict'] == r['asks'] for r in rows))} | {auc(rows):.3f} | {ranked} of {pairs} questions | "
          f"{share(leave_one_question_out(rows))} | {min(r['p_asks'] for r in rows):.3f}-{max(r['p_asks'] for r in rows):.3f} |")


if __name__ == "__main__":
    main()
