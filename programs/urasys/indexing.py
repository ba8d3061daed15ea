"""URASys indexing modules: Chunk-and-Title (rewrite a chunk with its document's context, then title it)
and Ask-and-Augment (FAQ pairs grounded in the titled chunk, each question paraphrased k ways)."""

from __future__ import annotations

import logging

import dspy

from askfirst.programs.common.robust import StepFailed, call_predictor
from askfirst.signatures.urasys_indexing import AssignTitle, CreateFAQs, ExpandFAQ, RewriteChunk

logger = logging.getLogger(__name__)


class ChunkAndTitle(dspy.Module):
    """Phase 1: ``ChunkRewriter(d_i, d) -> c_i``, ``TitleAssigner(c_i) -> t_i``; the unit is ``t_i`` + ``c_i``."""

    def __init__(self, *, retries: int = 2):
        super().__init__()
        self.retries = retries
        self.rewriter = dspy.Predict(RewriteChunk)
        self.title_assigner = dspy.Predict(AssignTitle)

    def forward(self, chunk: str, document: str, document_title: str) -> dspy.Prediction:
        rewritten = call_predictor(self.rewriter, "chunk_rewriter", retries=self.retries, document_title=document_title,
                                   document=document, chunk=chunk).rewritten_chunk.strip()
        title = call_predictor(self.title_assigner, "title_assigner", retries=self.retries, chunk=rewritten or chunk).title.strip()
        return dspy.Prediction(text=rewritten or chunk, title=title or document_title)


class AskAndAugment(dspy.Module):
    """Phase 2: ``FAQCreator(x_i)`` -> m question-answer pairs; ``FAQExpander(q)`` -> k paraphrases sharing the answer."""

    def __init__(self, *, faqs_per_chunk: int = 5, paraphrases: int = 3, retries: int = 2):
        super().__init__()
        self.faqs_per_chunk, self.paraphrases, self.retries = faqs_per_chunk, paraphrases, retries
        self.creator = dspy.Predict(CreateFAQs)
        self.expander = dspy.Predict(ExpandFAQ)

    def forward(self, titled_chunk: str) -> list[dict]:
        """``[{question, answer, paraphrases}]``; a question whose paraphrasing fails keeps just itself."""
        out = call_predictor(self.creator, "faq_creator", retries=self.retries, titled_chunk=titled_chunk, number_of_pairs=self.faqs_per_chunk)
        faqs, seen = [], set()
        for pair in list(out.faqs or [])[: self.faqs_per_chunk]:
            question, answer = str(pair.get("question", "")).strip(), str(pair.get("answer", "")).strip()
            if not question or not answer or question.lower() in seen:
                continue
            seen.add(question.lower())
            faqs.append({"question": question, "answer": answer, "paraphrases": self._paraphrase(question, answer)})
        return faqs

    def _paraphrase(self, question: str, answer: str) -> list[str]:
        if not self.paraphrases:
            return []
        try:
            out = call_predictor(self.expander, "faq_expander", retries=self.retries, question=question, answer=answer,
                                 number_of_paraphrases=self.paraphrases)
        except StepFailed as exc:
            logger.warning("%s", exc)
            return []
        # A paraphrase is a question: one that repeats the question or carries the answer is no paraphrase.
        kept = [p.strip() for p in out.paraphrases or [] if p.strip() and p.strip().lower() != question.lower()
                and (len(answer) < 3 or answer.lower() not in p.lower())]
        return list(dict.fromkeys(kept))[: self.paraphrases]
