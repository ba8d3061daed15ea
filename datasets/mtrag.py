"""MTRAG-UN (SemEval-2026 Task 8): multi-turn tasks, their qrels and the passage pool."""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path

import dspy

from askfirst.datasets.errors import DataError
from askfirst.datasets.jsonl import read_jsonl

COLLECTIONS = ("clapnq", "cloud", "fiqa", "govt")
# Task files call the cloud collection "ibmcloud"; its qrels and passage pool files say "cloud".
_COLLECTION_ALIASES = {"ibmcloud": "cloud"}


def load_qrels(path: Path) -> dict[str, dict[str, int]]:
    """``{query_id: {passage_id: relevance}}`` from a TSV with a ``query-id corpus-id score`` header."""
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    with path.open(encoding="utf-8") as handle:
        for number, row in enumerate(csv.reader(handle, delimiter="\t"), start=1):
            if number == 1 and row and row[0] == "query-id":
                continue
            if len(row) != 3:
                raise DataError(f"{path}:{number}: expected 3 tab-separated columns, got {len(row)}")
            qrels[row[0]][row[1]] = int(row[2])
    return dict(qrels)


def load_mtrag_tasks(data_dir: Path, *, split_file: str = "mtragun_dev.jsonl") -> list[dspy.Example]:
    """MTRAG-UN generation tasks as Examples: the conversation up to the task's last user turn, the reference
    answer, gold passage ids (from the task's qrels), answerability and collection."""
    root = data_dir / "mtrag"
    qrels: dict[str, dict[str, int]] = {}
    for name in COLLECTIONS:
        q = root / f"mtragun_dev_qrels_{name}.tsv"
        if q.is_file():
            qrels.update(load_qrels(q))
    examples = []
    for number, rec in read_jsonl(root / split_file):
        turns = [{"role": "assistant" if t.get("speaker") == "agent" else "user", "content": t.get("text", "")} for t in rec.get("input", [])]
        if not turns or turns[-1]["role"] != "user":
            raise DataError(f"{root / split_file}:{number}: the task's input must end with a user turn")
        targets = rec.get("targets") or []
        examples.append(dspy.Example(
            id=rec["task_id"], conversation_id=rec.get("conversation_id"), conversation=turns,
            answerability=(rec.get("answerability") or ["ANSWERABLE"])[0], collection=_COLLECTION_ALIASES.get(str(rec.get("Collection", "")).lower(), str(rec.get("Collection", "")).lower()),
            reference=targets[0]["text"] if targets else "", gold_passages=sorted(qrels.get(rec["task_id"], {})),
            qrels=qrels.get(rec["task_id"], {}), gold_answers=[], clarification_options=[], kind="mtrag",
        ).with_inputs("conversation"))
    return examples


def passage_pool_path(data_dir: Path, collection: str) -> Path:
    return data_dir / "mtrag" / "passage_pool" / f"{collection}.jsonl"
