"""How far the asks-for-info judge (URASys's check that a clarification asks for one of a question's ``info`` items)
can be trusted on a given ``judge_lm``, read against hand-labelled replies.

``bench/asks_for_info_labels.jsonl`` holds 32 replies to URASys SQuAD2-ambiguous dev questions, written by hand in
the askfirst program's reply forms: 16 that ask for an ``info`` item (the item is named in ``why``) and 16 that do not
(they ask about something else or the form of the answer, answer, refuse or say "I don't know"). The questions and
their items are read from the data folder, never copied. Each reply is judged as `askfirst eval` judges a
clarification (``AmbiguityJudges.asks_for_info`` on ``judge_lm``, else ``lm``), and the verdicts are counted against
the labels.

    ASKFIRST_DATA_DIR=../shared/data python bench/asks_for_info_judge.py [--set judge_lm.model=openai/gpt-4o ...]

An asks-for-info figure from `askfirst eval` means something only where this agreement is high.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from askfirst.config import load_config
from askfirst.datasets.questions import load_questions
from askfirst.evaluation.stats import proportion_ci
from askfirst.lm.factory import configure_dspy
from askfirst.programs.factory import build_ambiguity_judges

HERE = Path(__file__).parent


def read_labels(path: Path) -> list[dict]:
    """The labelled replies, each ``{id, asks, reply, why}``; a malformed line names its file and line."""
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        try:
            row = json.loads(line)
            rows.append({"id": str(row["id"]), "asks": bool(row["asks"]), "reply": str(row["reply"]), "why": str(row.get("why", ""))})
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise SystemExit(f"{path}:{number}: not a labelled reply ({type(exc).__name__}: {exc})") from None
    return rows


def labelled_questions(config, labels: list[dict]) -> dict:
    """The configured questions by id; every labelled reply's question must be among them."""
    questions = {e.id: e for e in load_questions(config.data.questions, data_dir=config.data.shared_data_dir)}
    missing = sorted({row["id"] for row in labels} - set(questions))
    if missing:
        raise SystemExit(f"{config.data.questions} has no question {missing[0]} (and {len(missing) - 1} more)")
    return questions


def judge_all(config, labels: list[dict]) -> list[dict]:
    """Each label with the judge's ``verdict`` (True, False, or None when the judge's reply did not parse)."""
    questions = labelled_questions(config, labels)
    configure_dspy(config)
    judges = build_ambiguity_judges(config)
    out = []
    for row in labels:
        example = questions[row["id"]]
        verdict = judges.asks_for_info(question=example.conversation[-1]["content"], info=list(example.clarification_options), reply=row["reply"])
        out.append(row | {"verdict": verdict})
    return out


def summary(judged: list[dict]) -> str:
    """A markdown table of agreement, the share of asking replies judged asking and of the others judged not."""
    asking = [row for row in judged if row["asks"]]
    others = [row for row in judged if not row["asks"]]

    def share(hits: int, n: int) -> str:
        if not n:
            return "-"
        low, high = proportion_ci(hits, n)
        return f"{hits}/{n} = {hits / n:.2f} [{low:.2f}, {high:.2f}]"

    judged_asking = sum(row["verdict"] is True for row in asking)
    judged_not = sum(row["verdict"] is False for row in others)
    unparsed = sum(row["verdict"] is None for row in judged)
    return ("| replies | agreement | asking judged asking | not asking judged not | unparsed |\n|---|---|---|---|---|\n"
            f"| {len(judged)} | {share(judged_asking + judged_not, len(judged))} | {share(judged_asking, len(asking))} | "
            f"{share(judged_not, len(others))} | {unparsed} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default=str(HERE / "askfirst_squad2_ambiguous.yaml"), help="Its lm / judge_lm judge; its data.questions has the ids.")
    parser.add_argument("--labels", default=str(HERE / "asks_for_info_labels.jsonl"))
    parser.add_argument("--set", action="append", default=[], help="A config override, e.g. judge_lm.model=… or runs_dir=…")
    parser.add_argument("--log", help="Write every reply with its label and verdict here (JSONL).")
    args = parser.parse_args()
    config = load_config(Path(args.config), overrides=args.set)
    judged = judge_all(config, read_labels(Path(args.labels)))
    judge = config.judge_lm or config.lm
    print(f"judge: {judge.model}\n")
    print(summary(judged))
    wrong = [row for row in judged if row["verdict"] is not row["asks"]]
    if wrong:
        print("\nDisagreements (label, verdict, id, reply):")
        for row in wrong:
            print(f"- {row['asks']!s:5} {row['verdict']!s:5} {row['id']}: {row['reply']}")
    if args.log:
        Path(args.log).write_text("".join(json.dumps(row) + "\n" for row in judged), encoding="utf-8")


if __name__ == "__main__":
    main()
