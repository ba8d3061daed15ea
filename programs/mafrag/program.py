"""MAF-RAG: escalate from plain dense retrieval to expanded retrieval, a debate of passage agents and a fallback."""

from __future__ import annotations


import dspy

from askfirst.config import ProgramConfig
from askfirst.programs.base import Reply, Resources
from askfirst.programs.common.conversation import format_passages, question_and_history
from askfirst.programs.common.responders import Responders
from askfirst.programs.common.robust import StepFailed, call_predictor
from askfirst.programs.common.routes import IDK_MESSAGE
from askfirst.programs.mafrag.config import MafragConfig
from askfirst.programs.mafrag.debate import Debate
from askfirst.programs.mafrag.expansion import expand_with_synonyms, hybrid_score, keywords, load_synonyms
from askfirst.programs.mafrag.fallback import load_fallback
from askfirst.retrieval.chunking import Passage
from askfirst.signatures.mafrag import ExpandQuery



class MAFRAGProgram(dspy.Module):
    """MAF-RAG (Prasetyo, Handoko, Hastuti): each phase runs only when the one before is not confident enough.

    1. VOR: dense top ``vor_k``; confidence = the top cosine. The paper does not say how it aggregates the
       similarities into one confidence (max, mean of the top k, ...); the top one is used here.
    2. EVR: the query expanded with the domain dictionary (``synonyms_file``) and, with ``lm_expansion``, the
       LM's terms; dense top ``evr_k`` on it, re-scored S = 0.7 cos + 0.3 KeyMatch, kept when S > 0.35;
       confidence = the top S.
    3. Debate: the top ``debate_agents`` EVR passages, one agent each, an aggregator (``debate.py``); a known
       aggregate with confidence >= ``debate_accept`` is the answer, an "unknown" one falls through.
    4. Fallback: ``fallback_search`` (the paper searched the internet) answers from whatever it finds; unset,
       the reply is "I don't know".

    The paper contradicts itself on several values; Table III's are the defaults: VOR top 12 (text: 5) and accept
    at 0.75 (text: escalate below 0.6); EVR accept at 0.60 (text: 0.5); chunk overlap 200 (text: 100; chunking
    here is the shared index's). It also fixes no answer step for VOR and EVR: the shared complete-answer
    responder writes it. The question searched is the last user turn.

    Extras in the reply: ``stage`` (``vor``, ``evr``, ``debate``, ``fallback`` or ``none``: the phase that
    answered), ``confidence_by_phase``, ``expanded_query``, ``debate_rounds``.
    """

    def __init__(self, resources, config: MafragConfig, program: ProgramConfig, *, retries: int = 2):
        super().__init__()
        self.resources = Resources.of(resources)
        self.config, self.program_config, self.retries = config, program, retries
        self.synonyms = load_synonyms(config.synonyms_file)
        self.fallback = load_fallback(config.fallback_search)
        self.expand = dspy.Predict(ExpandQuery) if config.lm_expansion else None
        self.debate = Debate(max_rounds=config.debate_rounds, passage_chars=program.passage_chars, retries=retries)
        self.responders = Responders(retries=retries)

    def forward(self, conversation) -> Reply:
        question, history, warnings = question_and_history(conversation, self.program_config)
        state: dict = {"confidence_by_phase": {}, "ranking": [], "warnings": warnings, "queries": [question]}
        try:
            return self._escalate(question, history, state)
        except StepFailed as exc:
            return Reply.failed(exc, ranking=state["ranking"], queries=state["queries"], warnings=warnings, **self._extras(state, "none"))

    def _escalate(self, question: str, history: str, state: dict) -> Reply:
        c, phases = self.config, state["confidence_by_phase"]
        vor = self.resources.dense(question, c.vor_k)
        state["ranking"] = [p for p, _ in vor]
        phases["vor"] = vor[0][1] if vor else 0.0
        if vor and phases["vor"] >= c.vor_accept:
            return self._respond("vor", question, history, [p for p, _ in vor], state)

        expanded = self._expanded(question)
        state["expanded_query"] = expanded
        state["queries"].append(expanded)
        terms = keywords(expanded)
        rescored = sorted(((p, hybrid_score(terms, p, cos, cosine_weight=c.cosine_weight, keymatch_weight=c.keymatch_weight))
                           for p, cos in self.resources.dense(expanded, c.evr_k)), key=lambda ps: -ps[1])
        kept = [p for p, s in rescored if s > c.evr_keep]
        state["ranking"] = kept + [p for p in state["ranking"] if p not in kept]
        phases["evr"] = rescored[0][1] if kept else 0.0
        if kept and phases["evr"] >= c.evr_accept:
            return self._respond("evr", question, history, kept, state)

        agents = kept[: c.debate_agents]
        if agents:
            result = self.debate(question, agents)
            phases["debate"] = result.confidence
            state["debate_rounds"] = result.rounds
            if not result.unknown and result.confidence >= c.debate_accept:
                return Reply(route="answer", answer=result.answer, citations=result.citations(agents), evidence=agents, ranking=state["ranking"],
                             queries=state["queries"], warnings=state["warnings"], **self._extras(state, "debate"))

        if self.fallback is not None:
            found = list(self.fallback(question, c.fallback_k))
            if found:  # the paper accepts whatever the fallback finds
                return self._respond("fallback", question, history, found, state)
        return Reply(route="idk", answer=IDK_MESSAGE, ranking=state["ranking"], queries=state["queries"], warnings=state["warnings"],
                     **self._extras(state, "none"))

    def _expanded(self, question: str) -> str:
        terms = expand_with_synonyms(question, self.synonyms)
        if self.expand is not None:
            terms += call_predictor(self.expand, "mafrag_expand", retries=self.retries, query=question).expansions or []
        known = set(keywords(question))
        extra = [t.strip() for t in dict.fromkeys(terms) if t.strip() and not set(keywords(t)) <= known]
        return " ".join([question, *extra])

    def _respond(self, stage: str, question: str, history: str, passages: list[Passage], state: dict) -> Reply:
        evidence = passages[: self.config.evidence_k]
        reply = self.responders(route="answer", question=question, conversation_history=history,
                                passages_text=format_passages(evidence, max_chars=self.program_config.passage_chars),
                                passage_ids=[p.passage_id for p in evidence])
        return Reply(route="answer", answer=reply.answer, citations=reply.citations, evidence=evidence, ranking=state["ranking"] or evidence,
                     queries=state["queries"], warnings=state["warnings"], **self._extras(state, stage))

    @staticmethod
    def _extras(state: dict, stage: str) -> dict:
        return {"stage": stage, "confidence_by_phase": {k: round(v, 4) for k, v in state["confidence_by_phase"].items()},
                "expanded_query": state.get("expanded_query"), "debate_rounds": state.get("debate_rounds")}
