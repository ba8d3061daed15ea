"""An evaluation's outputs in formats other tools read: a TREC run file, and MTRAG's prediction records.

- ``run.trec``: ``query-id Q0 doc-id rank score run-name`` per ranked document, the program's whole ranking
  (``ranked_docs``), so ``trec_eval``, ``pytrec_eval`` and ``ranx`` score it unchanged. The programs give no
  retrieval score per document, so the score is the rank's reverse (``depth - rank + 1``): it orders the
  same way, and no tool has to break a tie.
- ``qrels.trec``: ``query-id 0 doc-id grade`` per judged document, the judgements the eval scored against (MTRAG's
  graded qrels, or a grade of 1 per gold passage), so ``trec_eval qrels.trec run.trec`` needs nothing else.
- ``mtrag_predictions.jsonl``: for MTRAG-UN tasks, records in the shape of ``mtragun_dev.jsonl`` (task id,
  conversation as ``input``, the reference as ``targets``, answerability, collection) with the ranked
  ``contexts`` and the reply as ``predictions``, the input MTRAG's official scorer reads.
"""

from __future__ import annotations

import json
from pathlib import Path

from askfirst.run_dir import write_atomic

TREC_RUN_FILE = "run.trec"
TREC_QRELS_FILE = "qrels.trec"
MTRAG_PREDICTIONS_FILE = "mtrag_predictions.jsonl"


def trec_run(records: list[dict], *, run_name: str) -> str:
    """The records' rankings as TREC run lines (query ids and document ids must not contain white space)."""
    lines = []
    for rec in records:
        ranked = rec.get("ranked_docs") or rec.get("retrieved_docs") or []
        for rank, doc in enumerate(ranked, start=1):
            lines.append(f"{_token(rec['id'])} Q0 {_token(doc)} {rank} {len(ranked) - rank + 1} {_token(run_name)}")
    return "".join(line + "\n" for line in lines)


def trec_qrels(examples: list) -> str:
    """The questions' relevance judgements as TREC qrels lines (questions without any are left out)."""
    lines = []
    for example in examples:
        qrels = dict(example.get("qrels") or {}) or {d: 1 for d in example.get("gold_passages") or []}
        lines += [f"{_token(example.id)} 0 {_token(doc)} {int(grade)}" for doc, grade in qrels.items()]
    return "".join(line + "\n" for line in lines)


def _token(text: str) -> str:
    if any(c.isspace() for c in str(text)):
        raise ValueError(f"{text!r} has white space, which a TREC run file cannot hold")
    return str(text)


def mtrag_predictions(examples: list, records: list[dict], passage_text: dict[str, str]) -> str:
    """MTRAG-format task records with the program's contexts and prediction, one JSON object per line."""
    lines = []
    for example, rec in zip(examples, records, strict=True):
        ranked = rec.get("ranked_docs") or rec.get("retrieved_docs") or []
        lines.append(json.dumps({
            "task_id": example.id, "conversation_id": example.get("conversation_id"),
            "input": [{"speaker": "agent" if t["role"] == "assistant" else "user", "text": t["content"]} for t in example.conversation],
            "targets": [{"speaker": "agent", "text": example.get("reference") or ""}],
            "answerability": [example.answerability], "Collection": example.get("collection") or "",
            "contexts": [{"document_id": doc, "text": passage_text.get(doc, ""), "score": float(len(ranked) - i)} for i, doc in enumerate(ranked)],
            "predictions": [{"text": rec["answer"]}], "route": rec["route"],
        }, ensure_ascii=False))
    return "".join(line + "\n" for line in lines)


def write_exports(examples: list, records: list[dict], *, run_dir: Path, passage_text: dict[str, str]) -> list[Path]:
    """Write ``run.trec`` and ``qrels.trec`` (always) and ``mtrag_predictions.jsonl`` (when every question is an MTRAG task)."""
    written = [write_atomic(run_dir / TREC_RUN_FILE, trec_run(records, run_name=run_dir.name)),
               write_atomic(run_dir / TREC_QRELS_FILE, trec_qrels(examples))]
    if examples and all(e.get("kind") == "mtrag" for e in examples):
        written.append(write_atomic(run_dir / MTRAG_PREDICTIONS_FILE, mtrag_predictions(examples, records, passage_text)))
    return written
