"""URASys's FAQ collection as a second source of the askfirst program's ranking, fused with RRF by document.

An FAQ entry (a question the indexing LM asked of a chunk, or a paraphrase of one, with its answer) is not a passage
of the corpus: ranking metrics and citations are about passages. So the entries vote for documents: the FAQ list,
in the order the FAQ search gave it, becomes a list of the documents its entries come from (an FAQ's paraphrases
would otherwise vote several times for one document), and each document's vote goes to its best-ranked passage in
the document search. The two lists are fused with reciprocal rank fusion. An entry whose document the document search
did not find joins the ranking itself (``Q: … A: …``, with its document's id), so what only the FAQ collection found
can still be read and cited.
"""

from __future__ import annotations

from askfirst.retrieval.chunking import Passage
from askfirst.retrieval.fusion import reciprocal_rank_fusion


def fuse_faq_hits(passages: list[Passage], faq_hits: list[Passage], *, k: int = 60) -> list[Passage]:
    """``passages`` (the document search, best first) fused with ``faq_hits`` (FAQ entries, best first), as above.

    Args:
        passages: The document search's passages, best first.
        faq_hits: The FAQ collection's entries for the same query, best first.
        k: The RRF constant (``retriever.rrf_k``).

    Returns:
        The fused ranking: every passage of ``passages`` and the entries of documents it lacks, best first.
    """
    best: dict[str, Passage] = {}
    for passage in passages:
        best.setdefault(passage.doc_id, passage)
    by_id = {p.passage_id: p for p in passages}
    voted, seen_docs = [], set()
    for entry in faq_hits:
        if entry.doc_id in seen_docs:
            continue
        seen_docs.add(entry.doc_id)
        target = best.get(entry.doc_id, entry)
        by_id.setdefault(target.passage_id, target)
        voted.append(target.passage_id)
    fused = reciprocal_rank_fusion([[p.passage_id for p in passages], voted], k=k)
    return [by_id[pid] for pid, _ in fused]
