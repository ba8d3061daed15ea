"""An evaluation's outputs in formats other tools read: a TREC run file, and MTRAG's prediction records.

- ``run.trec``: ``query-id Q0 doc-id rank score run-name`` per ranked document, the program's whole ranking
  (``ranked_docs``), so ``trec_eval``, ``pytrec_eval`` and ``ranx`` score it unchanged. The programs give no
  retrieval score per document, so the score is the rank's reverse (``depth - rank + 1``): it orders the
  same way, and no tool has to break a tie. A question with judgements and no ranking (its step failed) gets one
  line ranking ``NO_RANKING``, a document no qrels name, so every tool scores it 0 as askfirst does, instead of
  dropping it (pytrec_eval, ranx) or stopping (trec_eval without ``-c``).
- ``qrels.trec``: ``query-id 0 doc-id grade`` per judged document, the judgements the eval scored against (MTRAG's
  graded qrels, or a grade of 1 per gold passage), so ``trec_eval qrels.trec run.trec`` needs nothing else.
- ``mtrag_predictions.jsonl``: for MTRAG-UN tasks, records in the shape of ``mtragun_dev.jsonl`` (task id,
  conversation as ``input``, the reference as ``targets``, answerability, the collection under the name MTRAG's
  scorer knows) with the first ``MTRAG_CONTEXTS`` ranked documents as ``contexts`` (each with the text of the passage
  of it the program ranked first) and the reply as ``predictions``, the input of MTRAG's ``format_checker.py``,
  ``run_retrieval_eval.py`` and ``run_generation_eval.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

from askfirst.run_dir import write_atomic

TREC_RUN_FILE = "run.trec"
TREC_QRELS_FILE = "qrels.trec"
MTRAG_PREDICTIONS_FILE = "mtrag_predictions.jsonl"
NO_RANKING = "askfirst-no-ranking"  # the one document a failed question's ranking holds
MTRAG_CONTEXTS = 10  # the official format checker's maximum
MTRAG_COLLECTIONS = {  # askfirst's collection names -> the names run_retrieval_eval.py reads qrels for
    "clapnq": "mt-rag-clapnq-elser-512-100-20240503", "govt": "mt-rag-govt-elser-512-100-20240611",
    "fiqa": "mt-rag-fiqa-beir-elser-512-100-20240501", "cloud": "mt-rag-ibmcloud-elser-512-100-20240502",
}


def trec_run(records: list[dict], *, run_name: str, judged: set[str] = frozenset()) -> str:
    """The records' rankings as TREC run lines (query ids and document ids must not contain white space); a question
    of ``judged`` (those with qrels) whose ranking is empty gets the one line of ``NO_RANKING``."""
    lines = []
    for rec in records:
        ranked = rec.get("ranked_docs") or rec.get("retrieved_docs") or ([NO_RANKING] if rec["id"] in judged else [])
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


def mtrag_contexts(rec: dict, passage_text: dict[str, str]) -> list[dict]:
    """The record's first ``MTRAG_CONTEXTS`` ranked documents as MTRAG contexts, each with the text of the passage of it
    the program ranked first (``NO_RANKING``, with no text, for a question whose step failed before any ranking)."""
    docs = (rec.get("ranked_docs") or rec.get("retrieved_docs") or [])[:MTRAG_CONTEXTS]
    passages = rec.get("ranked_passages") or docs  # a record written before passages were kept: documents were passages
    if not docs:
        return [{"document_id": NO_RANKING, "text": "", "score": 0.0}]
    return [{"document_id": doc, "text": passage_text.get(pid, ""), "score": float(len(docs) - i)}
            for i, (doc, pid) in enumerate(zip(docs, passages))]


def mtrag_predictions(examples: list, records: list[dict], passage_text: dict[str, str]) -> str:
    """MTRAG-format task records with the program's contexts and prediction, one JSON object per line."""
    lines = []
    for example, rec in zip(examples, records, strict=True):
        collection = example.get("collection") or ""
        lines.append(json.dumps({
            "task_id": example.id, "conversation_id": example.get("conversation_id"),
            "input": [{"speaker": "agent" if t["role"] == "assistant" else "user", "text": t["content"]} for t in example.conversation],
            "targets": [{"speaker": "agent", "text": example.get("reference") or ""}],
            "answerability": [example.answerability], "Collection": MTRAG_COLLECTIONS.get(collection, collection),
            "contexts": mtrag_contexts(rec, passage_text), "predictions": [{"text": rec["answer"]}], "route": rec["route"],
        }, ensure_ascii=False))
    return "".join(line + "\n" for line in lines)


def write_exports(examples: list, records: list[dict], *, run_dir: Path, passage_text: dict[str, str]) -> list[Path]:
    """Write ``run.trec`` and ``qrels.trec`` (always) and ``mtrag_predictions.jsonl`` (when every question is an MTRAG task)."""
    judged = {e.id for e in examples if e.get("qrels") or e.get("gold_passages")}
    written = [write_atomic(run_dir / TREC_RUN_FILE, trec_run(records, run_name=run_dir.name, judged=judged)),
               write_atomic(run_dir / TREC_QRELS_FILE, trec_qrels(examples))]
    if is_mtrag(examples):
        written.append(write_atomic(run_dir / MTRAG_PREDICTIONS_FILE, mtrag_predictions(examples, records, passage_text)))
    return written


def is_mtrag(examples: list) -> bool:
    """Whether every question is an MTRAG task (so the MTRAG export and MTRAG's own figures apply)."""
    return bool(examples) and all(e.get("kind") == "mtrag" for e in examples)
