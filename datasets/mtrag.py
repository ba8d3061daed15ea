"""MTRAG-UN (SemEval-2026 Task 8): multi-turn tasks, their qrels and the passage pool."""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path

import dspy

from askfirst.datasets.corpus import load_corpus_file
from askfirst.datasets.errors import DataError
from askfirst.datasets.jsonl import read_jsonl

COLLECTIONS = ("clapnq", "cloud", "fiqa", "govt")
# Task files call the cloud collection "ibmcloud"; its qrels and passage pool files say "cloud".
_COLLECTION_ALIASES = {"ibmcloud": "cloud"}
SYNTHETIC_FILE = "mtrag_synthetic/synthetic.jsonl"
HUMAN_RETRIEVAL_DIR = "mtrag_human_retrieval_tasks"  # MTRAG's human retrieval tasks: other conversations than MTRAG-UN's
_USER_TURN = "|user|: "


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
    return [_task_example(rec, qrels.get(rec.get("task_id"), {}), where=f"{root / split_file}:{number}")
            for number, rec in read_jsonl(root / split_file)]


def load_mtrag_synthetic(data_dir: Path) -> list[dspy.Example]:
    """MTRAG's synthetic generation tasks (``mtrag_synthetic/synthetic.jsonl``: ANSWERABLE, PARTIAL and UNANSWERABLE,
    none UNDERSPECIFIED) as Examples like MTRAG-UN's, over the same passage pool. They come without qrels: a task's gold
    passages are the pool passages whose text (whitespace aside) is one of its contexts, each of relevance 1."""
    root = data_dir / "mtrag"
    by_text: dict[str, list[str]] = defaultdict(list)
    for name in COLLECTIONS:
        for doc in load_corpus_file(passage_pool_path(data_dir, name)):
            by_text[" ".join(doc.text.split())].append(doc.doc_id)
    path = root / SYNTHETIC_FILE
    examples = []
    for number, rec in read_jsonl(path):
        found = (by_text.get(" ".join(str(c.get("text", "")).split()), []) for c in rec.get("contexts") or [])
        examples.append(_task_example(rec, {pid: 1 for ids in found for pid in ids}, where=f"{path}:{number}"))
    return examples


def load_mtrag_rewrites(data_dir: Path) -> list[dspy.Example]:
    """MTRAG's human query rewrites of follow-up turns, as labelled examples of the standalone rewrite: per collection,
    ``<name>_questions.jsonl`` (a task's user turns so far, ``|user|: `` before each) and ``<name>_rewrite.jsonl`` (the
    last of them rewritten by an annotator to stand alone), joined by task id. First turns are left out (nothing to
    resolve). These conversations are MTRAG's human set, none of them MTRAG-UN's, so demonstrations drawn from them
    show the program no MTRAG-UN task.

    Returns:
        Examples with ``id``, ``collection``, ``conversation_history`` (the earlier user turns as the programs format a
        history: ``user: …`` a line), ``question`` (the last turn), ``standalone_question`` (the rewrite) and ``changed``
        (whether the rewrite differs from the turn, case and spacing aside).

    Raises:
        DataError: A collection's files are missing, a line is malformed (file and line named), or a rewrite has no
            conversation.
    """
    root = data_dir / "mtrag" / HUMAN_RETRIEVAL_DIR
    examples = []
    for name in COLLECTIONS:
        questions_path, rewrites_path = root / name / f"{name}_questions.jsonl", root / name / f"{name}_rewrite.jsonl"
        turns = {rec.get("_id"): _user_turns(rec, where=f"{questions_path}:{number}") for number, rec in read_jsonl(questions_path)}
        for number, rec in read_jsonl(rewrites_path):
            where = f"{rewrites_path}:{number}"
            said = turns.get(rec.get("_id"))
            if said is None:
                raise DataError(f"{where}: task {rec.get('_id')!r} has no conversation in {questions_path}")
            if len(said) < 2:
                continue
            rewrite = str(rec.get("text", "")).removeprefix(_USER_TURN).strip()
            if not rewrite:
                raise DataError(f"{where}: the rewrite is empty")
            examples.append(dspy.Example(
                id=rec["_id"], collection=name, conversation_history="\n".join(f"user: {t}" for t in said[:-1]), question=said[-1],
                standalone_question=rewrite, changed=" ".join(rewrite.lower().split()) != " ".join(said[-1].lower().split()),
            ).with_inputs("conversation_history", "question"))
    return examples


def _user_turns(rec: dict, *, where: str) -> list[str]:
    text = rec.get("text")
    if not isinstance(text, str) or "_id" not in rec:
        raise DataError(f"{where}: a question record has an _id and a text")
    # A turn may hold line breaks of its own: split where a line starts with the marker.
    return [turn.strip() for turn in f"\n{text.strip()}".split(f"\n{_USER_TURN}") if turn.strip()]


def _task_example(rec: dict, qrels: dict[str, int], *, where: str) -> dspy.Example:
    turns = [{"role": "assistant" if t.get("speaker") == "agent" else "user", "content": t.get("text", "")} for t in rec.get("input", [])]
    if not turns or turns[-1]["role"] != "user":
        raise DataError(f"{where}: the task's input must end with a user turn")
    if "task_id" not in rec:
        raise DataError(f"{where}: the task has no task_id")
    targets = rec.get("targets") or []
    collection = str(rec.get("Collection", "")).lower()
    # The synthetic release spells the label field "Answerability" and its collections "mt-rag-<name>-elser-...".
    collection = next((name for name in (*COLLECTIONS, *_COLLECTION_ALIASES) if f"-{name}-" in collection), collection)
    return dspy.Example(
        id=rec["task_id"], conversation_id=rec.get("conversation_id"), conversation=turns,
        answerability=(rec.get("answerability") or rec.get("Answerability") or ["ANSWERABLE"])[0],
        collection=_COLLECTION_ALIASES.get(collection, collection), reference=targets[0]["text"] if targets else "",
        gold_passages=sorted(qrels), qrels=qrels, gold_answers=[], clarification_options=[], kind="mtrag",
    ).with_inputs("conversation")


def passage_pool_path(data_dir: Path, collection: str) -> Path:
    return data_dir / "mtrag" / "passage_pool" / f"{collection}.jsonl"
