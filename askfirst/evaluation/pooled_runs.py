"""Finished eval runs read back as one: the chunks of a question set run apart (``data.ids``, or ``data.offset`` and
``data.limit``, in turn), pooled. A run stopped before its end counts with the questions it finished."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from askfirst.config import AskFirstConfig
from askfirst.datasets.splits import configured_questions
from askfirst.evaluation.runner import PREDICTIONS_FILE, question_scores, read_finished, read_scores, run_summary
from askfirst.trust import operator_config, read_run_config


@dataclass
class PooledRun:
    """Finished runs of one config read back as one run of all their questions.

    Attributes:
        config: The first run's config (the others' are the same but for the chunk they select).
        scores: Every question's scores, sorted by id.
        records: Every question's prediction record, by id (the last one a run wrote for it, as the run read it back).
        summary: One run's own ``metrics.json``; of several, what one run of all their questions would have written
            before judging (``run_summary``; the judged MTRAGEval HM, a whole-run figure, is not pooled).
    """

    config: AskFirstConfig
    scores: list[dict]
    records: dict[str, dict]
    summary: dict


def pooled_run(folders: list[Path]) -> PooledRun:
    """The finished runs in ``folders`` as one run of all their questions.

    Raises:
        ValueError: Their configs differ in more than the chunk they select, or a question is in two of them.
    """
    configs = [read_run_config(folder / "config.yaml", operator_config(folder), adopt=False)[0] for folder in folders]
    unlike = [str(folder) for folder, config in zip(folders, configs) if _but_ids(config) != _but_ids(configs[0])]
    if unlike:
        raise ValueError(f"the configs of {', '.join(unlike)} differ from {folders[0]}'s in more than the chunk "
                         "they select (data.ids, data.offset, data.limit)")
    scores = [sc for folder, config in zip(folders, configs) for sc in _scores(folder, config)]
    seen: set[str] = set()
    for qid in (sc["id"] for sc in scores):
        if qid in seen:
            raise ValueError(f"question {qid} is in more than one of the runs {', '.join(map(str, folders))}")
        seen.add(qid)
    records = {qid: rec for folder in folders for qid, rec in read_finished(folder / PREDICTIONS_FILE).items()}
    if len(folders) == 1 and (folders[0] / "metrics.json").exists():
        summary = json.loads((folders[0] / "metrics.json").read_text(encoding="utf-8"))
    else:
        summary = run_summary(scores, [records[sc["id"]] for sc in scores])
    return PooledRun(configs[0], sorted(scores, key=lambda sc: sc["id"]), records, summary)


def _scores(folder: Path, config: AskFirstConfig) -> list[dict]:
    """The run's ``scores.jsonl``; of a run stopped before writing it, its finished questions scored as it would have."""
    if (folder / "scores.jsonl").exists():
        return read_scores(folder)
    finished = read_finished(folder / PREDICTIONS_FILE)
    examples = [e for e in configured_questions(config) if e.id in finished]
    return question_scores(examples, [finished[e.id] for e in examples], k=config.program.evidence_k)


def _but_ids(config: AskFirstConfig) -> dict:
    dumped = config.model_dump(mode="json")
    for key in ("ids", "offset", "limit"):  # what divides a question set into chunks
        dumped["data"].pop(key, None)
    return dumped


def labelled_run(argument: str) -> tuple[str, PooledRun]:
    """A bench script's ``LABEL=run[,run…]`` argument: its label and its comma-separated runs pooled.

    Raises:
        ValueError: As ``pooled_run`` does, its message led by the label.
    """
    label, _, folders = argument.partition("=")
    try:
        return label, pooled_run([Path(folder) for folder in folders.split(",")])
    except ValueError as exc:
        raise ValueError(f"{label}: {exc}") from exc


def paired_runs(arguments: list[str]) -> list[tuple[str, PooledRun]]:
    """A bench script's two ``LABEL=run[,run…]`` arguments, read as two runs of the same questions.

    Raises:
        ValueError: There are not two such arguments (message ``""``: show the usage), a side is not one run as
            ``labelled_run`` needs, or the two sides differ in their questions.
    """
    if len(arguments) != 2 or not all("=" in argument for argument in arguments):
        raise ValueError("")
    (first_label, first), (second_label, second) = sides = [labelled_run(argument) for argument in arguments]
    only_one = {sc["id"] for sc in first.scores} ^ {sc["id"] for sc in second.scores}
    if only_one:
        raise ValueError(f"{first_label} and {second_label} differ in their questions: {len(only_one)} question(s) in one only")
    return sides
