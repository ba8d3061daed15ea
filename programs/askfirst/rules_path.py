"""The rules path (``askfirst.policy=rules``): the hand-set chain of checks, each deciding as it goes.

Kept beside the fitted route policy as its baseline and fallback: the lexical cues, the retrieval gate and the
assessment each may settle the route by a rule, then escalation (MAF-RAG's expanded search) and the debate may take an
"I don't know" or a partial answer further. ``AskFirstProgram`` inherits it; the stages it calls are the program's.
"""

from __future__ import annotations

from functools import partial

from askfirst.programs.askfirst.absent_terms import coverage, term_checker
from askfirst.programs.askfirst.key_terms import documents_with
from askfirst.programs.askfirst.lexicon import has_term
from askfirst.programs.askfirst.question_form import question_form
from askfirst.programs.askfirst.topic_switch import switched_referents
from askfirst.programs.askfirst.unnamed_referent import (bare_referents, dangling_question, dangling_references, referent_question,
                                                          unnamed_referents, unseen_demonstratives)
from askfirst.programs.base import Reply
from askfirst.programs.common.conversation import history_text
from askfirst.programs.common.responders import clarifying_question
from askfirst.programs.common.robust import call_predictor
from askfirst.programs.common.routes import ANSWERING_ROUTES


class RulesPath:
    """The ``policy: rules`` path of :class:`~askfirst.programs.askfirst.program.AskFirstProgram`."""

    def _answer(self, question: str, history: str, state: dict) -> Reply:
        """``policy: rules``: retrieval, then each check in turn (dangling reference, topic switch, absent terms, the
        unnamed referent, the assessment, divergence, escalation, the debate, the referent cue) may settle the route."""
        extras = state["extras"]
        said_before = history_text(history)  # what earlier turns say, for the lexical cues
        query, gated_query = self._retrieval(question, history, state)
        extras["top_cosine"] = self.top_cosine(gated_query)
        if (self.config.dangling_follow_up if history else self.config.dangling_reference) and self.config.mode == "ask_first":  # answer_all asks nothing
            extras["dangling"] = unseen_demonstratives(question, said_before) if history else dangling_references(question)
            if extras["dangling"]:  # "When did he return to work?", "this tricolor flag": no search can tell which is meant
                state["label"], state["confidence"] = "UNDERSPECIFIED", 1.0
                # The responder lists readings from the passages; the pronoun it does not name is what is unclear.
                return self._respond("clarify", question, history, state, lead=dangling_question(extras["dangling"], question))
        if self._topic_switch_checked(history, extras):
            extras["topic_switch"] = switched_referents(question, history, said_before, self.resources.embedder.embed,
                                                        below=self.config.topic_switch_below)
            if extras["topic_switch"]["switched"]:  # "the loan" after turns about web publishing: which loan is not said
                state["label"], state["confidence"] = "UNDERSPECIFIED", 1.0
                # No lead: the cue's word is as often what a phrase is about ("the fast food chain" gives "fast").
                return self._respond("clarify", question, history, state)
        if self.config.absent_terms and state["evidence"]:
            extras["absent_terms"] = coverage(question, term_checker(state["ranking"], partial(has_term, self.resources.retriever)), min_words=self.config.absent_terms)
            if extras["absent_terms"]["verdict"] == "none":  # no LM call, nor escalation: no search finds words the collection lacks
                state["label"], state["confidence"], state["p_answerable"] = "UNANSWERABLE", 1.0, 0.0
                return self._respond(self.program_config.unanswerable_route, question, history, state)
        if self.referent is not None and state["evidence"]:
            extras["referent"] = self.referent_signal(question, history)
            if extras["referent"]["flagged"] and self.config.mode == "ask_first":  # answer_all: the readings are answered below
                state["label"], state["confidence"] = "UNDERSPECIFIED", extras["referent"]["p_underspecified"]
                return self._respond("clarify", question, history, state)
        route = self._assess(query, history, state, state["evidence"], top_cosine=extras["top_cosine"])
        if route == "clarify" and self.config.mode == "answer_all":  # nothing is asked in answer_all mode
            route = "answer"
        # Ask only about a question the passages bear on: on an unanswerable one the top passages answer other
        # questions, and their answers diverge without the question having readings (measured: u01, u02 on the demo).
        # A partial one has a part they answer and a part they lack, not readings to choose between.
        if self.config.ambiguity != "off" and state["evidence"] and state["label"] not in ("UNANSWERABLE", "PARTIAL"):
            options = self._ambiguous(query, history, state)
            each = self._answer_each_reading(state) if options and self.config.mode == "answer_all" else None
            if each is not None:
                return each
            if options and self.config.mode == "ask_first":  # the readings are known: name them
                return Reply(route="clarify", answer=clarifying_question(options), options=options, label="UNDERSPECIFIED",
                             confidence=state["confidence"], **self._shared(state), **extras)
            if options is not None and self.config.mode == "ask_first":  # readings unnamed: the clarification responder finds them
                route = "clarify"
        if self.expand is not None and self._unsure(route, state):
            route = self._escalate(query, history, state, route)
        if route == "answer" and self.readings is not None:
            return self._answer_readings(query, state)
        if self.debate is not None and self._unsure(route, state):
            debated = self._debated(query, state)
            if debated is not None:
                return debated
        lead = ""
        # Of a why-, how-to or yes/no question the passages explain rather than name one X (as with factoid_divergence).
        answered_first = route == "answer" and not history and self.config.first_turn_cue_answered and question_form(question) == "fact"
        # Not past the retrieval gate: nothing in the collection is near the question, so it has no X the user may mean.
        if (route == "idk" or answered_first) and self.config.referent_cue and self.config.mode == "ask_first" and not extras["gated"]:
            # Nothing answers it, and it names its thing only by its kind: the user may mean one the collection has. A first
            # question answered from one X when other documents have one too may have meant another.
            extras["referent_cue"] = unnamed_referents(question, said_before) if history else [
                word for word in bare_referents(question, max_words=self.config.first_turn_cue_words)
                if len(documents_with(word, state["ranking"])) >= (2 if answered_first else 1)]
            if extras["referent_cue"]:
                route, state["label"] = "clarify", "UNDERSPECIFIED"
                # The responder is not told which word is unclear. Not for a follow-up: on MTRAG-UN its cue words were
                # as often what a phrase is about ("the importance of the tricolor", "the end of the series").
                lead = "" if history else referent_question(extras["referent_cue"])
        return self._respond(route, question, history, state, lead=lead)

    def _topic_switch_checked(self, history: str, extras: dict) -> bool:
        """Whether the topic-switch check runs: on a follow-up in ``ask_first`` mode with ``topic_switch_below`` set and an
        embedder, and not past the retrieval gate (nothing in the collection is near the question, so it has no X to mean)."""
        return (bool(history) and self.config.topic_switch_below is not None and self.config.mode == "ask_first"
                and self.resources.embedder is not None and not self.gated(extras["top_cosine"]))

    def _unsure(self, route: str, state: dict) -> bool:
        """Whether escalation (and the debate) may take ``route`` further: a gated question only with ``escalate_gated``."""
        if state["extras"]["gated"] and not self.config.escalate_gated:
            return False
        return route in ("idk", "partial") and (state["p_answerable"] or 0.0) < self.config.escalate_below

    def _escalate(self, query: str, history: str, state: dict, route: str) -> str:
        """MAF-RAG's escalation: the query expanded and searched again, and assessed on the wider evidence; the new route
        where it answers, else ``route`` with the first assessment's record."""
        expansions = call_predictor(self.expand, "askfirst_expand", retries=self.retries, query=query).expansions or []
        expanded = " ".join([query, *[e.strip() for e in expansions if e.strip()]])
        if expanded == query:
            return route
        state["queries"].append(expanded)
        found = self.resources.search([query, expanded], self.program_config.rerank_candidates)
        known = {p.passage_id for p in state["evidence"]}
        evidence = (state["evidence"] + [p for p in found if p.passage_id not in known])[: len(state["evidence"]) + 2]
        before = {k: state[k] for k in ("label", "confidence", "p_answerable")}
        before_extras = {k: state["extras"][k] for k in ("key_terms", "probability_source", "gated", "unanswerable_overruled")}
        top_cosine = max((c for c in (state["extras"]["top_cosine"], self.top_cosine(expanded)) if c is not None), default=None)
        new_route = self._assess(query, history, state, evidence, top_cosine=top_cosine)
        state["extras"]["escalated"] = True
        if new_route in ANSWERING_ROUTES:
            state["evidence"], shown = evidence, {e.passage_id for e in evidence}
            state["ranking"] = evidence + [p for p in state["ranking"] if p.passage_id not in shown]
            return new_route
        state.update(before)  # the first assessment stands, with what it recorded
        state["extras"].update(before_extras)
        return route

    def _debated(self, query: str, state: dict) -> Reply | None:
        """MAF-RAG's debate on the top evidence passages: the aggregate as the answer when it is known and its
        confidence reaches ``debate_accept``; ``None`` (the route stands) otherwise."""
        agents = state["evidence"][: self.debate_settings.debate_agents]
        if not agents:
            return None
        result = self.debate(query, agents)
        accepted = not result.unknown and result.confidence >= self.debate_settings.debate_accept
        state["extras"]["debate"] = {"rounds": result.rounds, "confidence": result.confidence, "unknown": result.unknown, "accepted": accepted}
        if not accepted:
            return None
        return Reply(route="answer", answer=result.answer, citations=result.citations(agents), label=state["label"],
                     confidence=state["confidence"], p_answerable=state["p_answerable"], **self._shared(state), **state["extras"])
