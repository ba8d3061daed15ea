"""askfirst: one program whose stages are the five papers' strategies, and which asks before it answers."""

from __future__ import annotations

import dspy

from askfirst.config import ProgramConfig
from askfirst.evaluation.answer_metrics import normalize_answer
from askfirst.programs.askfirst.config import AskfirstConfig
from askfirst.programs.base import Reply, Resources
from askfirst.programs.common.conversation import format_passages, question_and_history
from askfirst.programs.common.robust import StepFailed, call_predictor
from askfirst.retrieval.chunking import Passage
from askfirst.signatures.askfirst import CandidateAnswer, StandaloneQuestion
from askfirst.signatures.clarion import AnalyzeAmbiguity
from askfirst.signatures.mafrag import ExpandQuery
from askfirst.signatures.r2rag import RouteComplexity


# Words too general to pick out a document (the question words and the corpus's generic nouns are stopwords enough).
_COMMON = frozenset("of for and in on to with by per what which who how when where is are".split())


def clarifying_question(options: list[str]) -> str:
    return f"Your question could be about several things: {'; '.join(options)}. Which one do you mean?"


def _distinctive(title: str, others: list[str]) -> set[str]:
    """Title words that name this document and no other: codes and numbers ("CS 201"), or words the others lack."""
    words = set(normalize_answer(title).split()) - _COMMON
    other_words = set().union(*(set(normalize_answer(o).split()) for o in others)) if others else set()
    return {w for w in words if any(c.isdigit() for c in w) or w not in other_words}


def divergent_options(candidates: list[tuple[Passage, str]], question: str = "") -> list[str]:
    """The titles of the documents behind two or more different candidate answers (empty when they agree).

    A candidate of "none" (the passage does not answer) takes no part; answers are compared after SQuAD
    normalisation, and documents are told apart by their ids, so two chunks of one document never diverge.
    A question that already names one of those documents by a word only its title has ("CS 201") is not
    ambiguous: the other documents answer other questions.
    """
    first_doc: dict[str, Passage] = {}
    for passage, answer in candidates:
        norm = normalize_answer(answer)
        if norm and norm != "none" and norm not in first_doc and passage.doc_id not in {p.doc_id for p in first_doc.values()}:
            first_doc[norm] = passage
    if len(first_doc) < 2:
        return []
    titles = list(dict.fromkeys(p.title or p.doc_id for p in first_doc.values()))
    asked = set(normalize_answer(question).split())
    if any(_distinctive(t, [o for o in titles if o != t]) & asked for t in titles):
        return []
    return titles


class AskFirstProgram(dspy.Module):
    """The composed program (issue 15), stage by stage; each stage is switched in ``askfirst`` (or ``program``):

    1. Standalone question (``standalone``): a follow-up is rewritten into a self-contained query.
    2. Complexity router (R2RAG, ``complexity_router``): simple -> one hybrid search; complex -> the SemEval
       query-generator <-> notes-builder loop (the notes program's, composed through the registry), re-ranked
       when ``program.reranker`` is on.
    3. Answerability classifier and router (the notes program's), with its ``program.answer_threshold``.
    4. Ambiguity (``ambiguity``), unless the classifier calls the question UNANSWERABLE: CLARION's detector
       grounded in the top passages, and evidence divergence (each of the top passages from distinct documents
       answers on its own; two or more different answers mean the question has readings the collection tells
       apart, and those documents' titles are the options). In ``ask_first`` mode an ambiguous question gets a
       clarifying question naming them.
    5. Escalation (MAF-RAG, ``escalation``): an "I don't know" or partial route whose P(answerable) is below
       ``escalate_below`` retrieves again with an LM-expanded query and is classified once more.
    6. The responders, with citations.

    Extras in the reply: ``stage`` (simple / complex), ``standalone_query``, ``ambiguity`` (what each signal
    said and the candidate answers), ``escalated``.
    """

    def __init__(self, resources, config: AskfirstConfig, program: ProgramConfig, *, notes, retries: int = 2):
        super().__init__()
        self.resources = Resources.of(resources)
        self.config, self.program_config, self.retries = config, program, retries
        self.rewrite = dspy.Predict(StandaloneQuestion) if config.standalone else None
        self.router = dspy.Predict(RouteComplexity) if config.complexity_router == "lm" else None
        self.retrieval, self.reranker = notes.retrieval, notes.reranker
        uses = {"detector": ("detector", "both", "either"), "divergence": ("divergence", "both", "either")}
        self.detect = dspy.Predict(AnalyzeAmbiguity) if config.ambiguity in uses["detector"] else None
        self.candidate = dspy.Predict(CandidateAnswer) if config.ambiguity in uses["divergence"] else None
        self.classifier = notes.router
        self.expand = dspy.Predict(ExpandQuery) if config.escalation else None
        self.responders = notes.responders

    def forward(self, conversation) -> Reply:
        question, history, warnings = question_and_history(conversation, max_question_chars=self.program_config.max_question_chars,
                                                           history_turns=self.program_config.history_turns)
        state: dict = {"queries": [], "evidence": [], "ranking": [], "label": None, "confidence": None, "p_answerable": None, "warnings": warnings,
                       "extras": {"stage": None, "standalone_query": question, "ambiguity": {}, "escalated": False}}
        try:
            return self._answer(question, history, state)
        except StepFailed as exc:
            return Reply.failed(exc, **self._shared(state), **state["extras"])

    def _answer(self, question: str, history: str, state: dict) -> Reply:
        extras = state["extras"]
        query = self._standalone(question, history)
        extras["standalone_query"] = query
        extras["stage"] = self._route(query, history)
        self._retrieve(query, history, state)
        passages_text = format_passages(state["evidence"], max_chars=self.program_config.passage_chars)
        route = self._classify(query, history, passages_text, state)
        # Ask only about a question the passages bear on: on an unanswerable one the top passages answer other
        # questions, and their answers diverge without the question having readings (measured: u01, u02 on the demo).
        if self.config.mode == "ask_first" and state["evidence"] and state["label"] != "UNANSWERABLE":
            options = self._ambiguous(query, state)
            if options:  # the readings are known: name them
                return Reply(route="clarify", answer=clarifying_question(options), options=options, label="UNDERSPECIFIED",
                             confidence=state["confidence"], **self._shared(state), **extras)
            if options is not None:  # ambiguous, readings unnamed: the clarification responder finds them in the passages
                return self._respond("clarify", question, history, state, passages_text)
        if self.expand is not None and route in ("idk", "partial") and (state["p_answerable"] or 0.0) < self.config.escalate_below:
            route, passages_text = self._escalate(query, history, state, route, passages_text)
        return self._respond(route, question, history, state, passages_text)

    def _standalone(self, question: str, history: str) -> str:
        if self.rewrite is None or not history:
            return question
        out = call_predictor(self.rewrite, "askfirst_standalone", retries=self.retries, conversation_history=history, question=question)
        return out.standalone_question.strip() or question

    def _route(self, query: str, history: str) -> str:
        if self.router is None:
            return self.config.complexity_router
        return call_predictor(self.router, "askfirst_router", retries=self.retries, conversation_history=history, question=query).complexity

    def _retrieve(self, query: str, history: str, state: dict) -> None:
        k = self.program_config.rerank_candidates
        if state["extras"]["stage"] == "complex":
            found = self.retrieval(question=query, conversation_history=history)
            pool, state["queries"] = found.passages, list(found.queries)
        else:
            pool, state["queries"] = self.resources.search([query], max(k, 10)), [query]
        head = pool[:k]
        if self.reranker is not None and head:
            head = self.reranker(question=query, passages=head).passages
        shown = {p.passage_id for p in head}
        state["evidence"] = head[: self.program_config.evidence_k]
        state["ranking"] = head + [p for p in pool if p.passage_id not in shown]

    def _ambiguous(self, query: str, state: dict) -> list[str] | None:
        """``None`` when the question is not (judged) ambiguous; else the options to offer (empty: let the
        clarification responder find them in the passages)."""
        signals, record = [], state["extras"]["ambiguity"]
        aspects: list[str] = []
        if self.detect is not None:
            out = call_predictor(self.detect, "askfirst_detect", retries=self.retries, query=query,
                                 passages=format_passages(state["evidence"], max_chars=self.program_config.passage_chars))
            detected = bool(out.is_ambiguous) and out.ambiguity_type != "none"
            record["detector"] = {"ambiguous": detected, "type": out.ambiguity_type}
            aspects = [str(a) for a in out.ambiguous_aspects or [] if str(a).strip()]
            signals.append(detected)
        options: list[str] = []
        if self.candidate is not None:
            candidates = self._candidates(query, state["ranking"])
            options = divergent_options(candidates, query)
            record["divergence"] = {"diverges": bool(options), "candidates": {p.passage_id: a for p, a in candidates}}
            signals.append(bool(options))
        if not signals:
            return None
        ambiguous = all(signals) if self.config.ambiguity == "both" else any(signals)
        record["ambiguous"] = ambiguous
        if not ambiguous:
            return None
        return options or (aspects if len(aspects) >= 2 else [])

    def _candidates(self, query: str, ranking: list[Passage]) -> list[tuple[Passage, str]]:
        picked, docs = [], set()
        for passage in ranking:
            if passage.doc_id not in docs:
                picked.append(passage)
                docs.add(passage.doc_id)
            if len(picked) == self.config.divergence_passages:
                break
        chars = self.program_config.passage_chars
        return [(p, call_predictor(self.candidate, "askfirst_candidate", retries=self.retries, question=query,
                                   passage=format_passages([p], max_chars=chars)).answer) for p in picked]

    def _classify(self, query: str, history: str, passages_text: str, state: dict) -> str:
        decision = self.classifier(question=query, conversation_history=history, passages_text=passages_text)
        state["label"], state["confidence"] = decision.label, decision.confidence
        state["p_answerable"] = decision.get("p_answerable", 0.0 if decision.route == "idk" else None)
        return decision.route

    def _escalate(self, query: str, history: str, state: dict, route: str, passages_text: str) -> tuple[str, str]:
        expansions = call_predictor(self.expand, "askfirst_expand", retries=self.retries, query=query).expansions or []
        expanded = " ".join([query, *[e.strip() for e in expansions if e.strip()]])
        if expanded == query:
            return route, passages_text
        state["queries"].append(expanded)
        found = self.resources.search([query, expanded], self.program_config.rerank_candidates)
        known = {p.passage_id for p in state["evidence"]}
        evidence = (state["evidence"] + [p for p in found if p.passage_id not in known])[: self.program_config.evidence_k + 2]
        text = format_passages(evidence, max_chars=self.program_config.passage_chars)
        new_route = self._classify(query, history, text, state)
        state["extras"]["escalated"] = True
        if new_route in ("answer", "partial"):
            state["evidence"] = evidence
            state["ranking"] = evidence + [p for p in state["ranking"] if p.passage_id not in {e.passage_id for e in evidence}]
            return new_route, text
        return route, passages_text

    def _respond(self, route: str, question: str, history: str, state: dict, passages_text: str) -> Reply:
        reply = self.responders(route=route, question=question, conversation_history=history, passages_text=passages_text,
                                passage_ids=[p.passage_id for p in state["evidence"]])
        return Reply(route=route, answer=reply.answer, citations=reply.citations, missing=reply.missing, options=reply.options,
                     label=state["label"], confidence=state["confidence"], **self._shared(state), **state["extras"])

    @staticmethod
    def _shared(state: dict) -> dict:
        return {"evidence": state["evidence"], "ranking": state["ranking"] or state["evidence"], "queries": state["queries"],
                "warnings": state["warnings"]}
