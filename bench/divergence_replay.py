"""Divergence replayed on a run's recorded per-passage answers, under the current code and a changed config (no LM).

Each record of an askfirst run whose divergence call was made keeps the answer each passage gave
(``extras.ambiguity.divergence.candidates``). This script builds the askfirst program from the run's saved config,
with ``--set`` overrides such as ``askfirst.divergence_rarest_word=false``. It hands the program those recorded answers
in place of the LM's and asks it again whether the question diverges. A rule about which answers count, or about
which questions divergence is asked of, can so be measured on every recorded divergence without an LM, on the run's own
index. Some records cannot be replayed:
- a question whose run skipped the call (its form, its parts, a document it names, being a follow-up) but which the replayed config would
  ask about has no recorded answers, and is counted as needing the LM;
- a record whose route was settled before asking first (a dangling reference, the collection check, an UNANSWERABLE or
  PARTIAL label) is not replayed. Divergence is not reached there, whatever the config.

    ASKFIRST_DATA_DIR=../shared/data python bench/divergence_replay.py RUN [RUN ...] [--set askfirst.X=Y ...] [--show N]

RUN: an eval run folder or an ablate cell folder (its ``config.yaml``, ``predictions.jsonl`` and, for the expected
routes, ``scores.jsonl``). The conversation comes from the run's question selection, so the data must be readable.
A changed verdict decides the route only where the run's divergence was what asked (or would ask) the question.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

import dspy

from askfirst.config import load_config
from askfirst.datasets.splits import configured_questions
from askfirst.evaluation.runner import read_finished, read_scores
from askfirst.programs.base import Resources
from askfirst.programs.common.conversation import question_and_history
from askfirst.programs.registry import Registry
from askfirst.retrieval.factory import open_retriever, open_store, store_path

# Built, never called: the rewrite's role LM would otherwise load the offline model.
NO_LM = ["retrieval_lm=null"]


class NeedsLM(Exception):
    """The replayed config asks divergence of a question whose run recorded no per-passage answers."""


class RecordedAnswers:
    """Stands in for the per-passage answers step: the answers the run recorded for this question, else :class:`NeedsLM`."""

    def __init__(self):
        self.answers: dict[str, str] | None = None

    def __call__(self, **_inputs) -> dspy.Prediction:
        if self.answers is None:
            raise NeedsLM
        return dspy.Prediction(passage_answers=[{"passage_id": pid, "answer": a} for pid, a in self.answers.items()])


def replay(run_dir: Path, overrides: list[str], *, show: int = 10) -> Counter:
    """Replay ``run_dir``'s divergences under its config with ``overrides``; print and return the counts."""
    config = load_config(run_dir / "config.yaml", overrides=[*overrides, *NO_LM])
    if config.program.kind != "askfirst" or config.askfirst.ambiguity != "divergence":
        raise SystemExit(f"{run_dir}: divergence replays need program.kind=askfirst and askfirst.ambiguity=divergence "
                         f"(CLARION's detector needs the LM)")
    examples = {e.id: e for e in configured_questions(config)}
    expected = {r["id"]: r.get("expected_route") for r in read_scores(run_dir)} if (run_dir / "scores.jsonl").exists() else {}
    store = open_store(config)
    counts, changed = Counter(), []
    try:
        program = Registry(Resources(retriever=open_retriever(config, store), store=store)).build("askfirst", config)
        program.passage_answers = recorded = RecordedAnswers()
        for record in read_finished(run_dir / "predictions.jsonl").values():
            was = ((record.get("extras") or {}).get("ambiguity") or {}).get("divergence")
            if was is None or record["id"] not in examples:
                continue  # settled before asking first, or not in the selection the config now makes
            recorded.answers = was.get("candidates")
            found = store.get_passages(record["retrieved"])  # the evidence the run assessed and asked each passage of
            if len(found) < len(set(record["retrieved"])):
                raise SystemExit(f"{run_dir}: {record['id']}'s evidence is not in the store at {store_path(config)}; give the "
                                 f"run's index with --set runs_dir=… (a relative runs_dir is read from the current folder)")
            evidence = [found[pid] for pid in record["retrieved"]]
            _, history, _ = question_and_history(examples[record["id"]].conversation, config.program)
            state = {"evidence": evidence, "candidates": [], "extras": {"ambiguity": {}}}
            try:
                now = bool(program._ambiguous(record["extras"]["standalone_query"], history, state))
            except NeedsLM:
                counts["needs the LM"] += 1
                continue
            counts["replayed"] += 1
            if now != bool(was.get("diverges")):
                direction = "diverges -> not" if was.get("diverges") else "not -> diverges"
                counts[f"{direction}, expected {expected.get(record['id'])}"] += 1
                changed.append(f"  {record['id'][:24]} {direction} (route {record['route']}, expected {expected.get(record['id'])}): "
                               f"{record['extras']['standalone_query'][:90]}")
    finally:
        store.close()
    print(f"{run_dir}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    print("\n".join(changed[:show]))
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path, help="eval run or ablate cell folders")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE", help="config overrides for the replay")
    parser.add_argument("--show", type=int, default=10, help="changed questions to print per run")
    args = parser.parse_args(argv)
    for run in args.runs:
        replay(run, args.overrides, show=args.show)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
