"""askfirst: one program whose stages are the five papers' strategies, and which asks before it answers."""

from __future__ import annotations

from functools import partial
from typing import get_args

import dspy

from askfirst.config import ProgramConfig
from askfirst.programs.askfirst.absent_terms import coverage, question_parts, term_checker
from askfirst.programs.askfirst.config import AskfirstConfig
from askfirst.programs.askfirst.divergence import (UNSAID_CHOICE, asks_which, divergent_options, named_reading, rarest_word, reading_name,
                                                   names_kinds, not_readings, repeated_example, titled_readings, ungrounded_options)
from askfirst.programs.askfirst.faq_fusion import fuse_faq_hits
from askfirst.programs.askfirst.lexicon import document_frequency, has_term
from askfirst.programs.askfirst.key_terms import content_stems, documents_with, echoes, stem, unmatched_terms
from askfirst.programs.askfirst.policy import RoutePolicy, rules_route
from askfirst.programs.askfirst.question_form import answer_type, question_form
from askfirst.programs.askfirst.rules_path import RulesPath
from askfirst.programs.askfirst.signals import record_signals
from askfirst.programs.askfirst.standalone import checked_rewrite, copies_one_of, mostly_new_words, repeats_earlier_turn, same_words, without_copied_tags
from askfirst.programs.askfirst.topic_switch import switched_referents
from askfirst.programs.askfirst.unnamed_referent import (bare_referents, dangling_kind, dangling_question, dangling_references,
                                                          referent_question, unnamed_referents, unseen_demonstratives)
from askfirst.programs.base import Reply, Resources
from askfirst.programs.common.answerability import LABELS, label_distribution, label_probability, label_scoring_config, route_for
from askfirst.programs.common.conversation import format_passages, history_text, previous_user_turn, question_and_history, to_turns
from askfirst.programs.common.responders import clarifying_question, partial_reply
from askfirst.programs.common.robust import StepFailed, call_predictor
from askfirst.retrieval.chunking import Passage
from askfirst.retrieval.cosine_reference import cosine_percentile
from askfirst.signatures.askfirst import AssessEvidence, PassageAnswers, ReferentLabel, StandaloneQuestion, UnnamedReferent
from askfirst.signatures.clarion import AnalyzeAmbiguity, ClarifyQuery, WriteLongAnswer
from askfirst.signatures.mafrag import ExpandQuery
from askfirst.signatures.r2rag import RouteComplexity


# The readings answer_all's writer gets at most, each with program.evidence_k passages: its prompt stays within the
# offline LM's context whatever the planner lists.
MAX_READINGS = 4


def assessed_passages(ranking: list[Passage], *, evidence_k: int, documents: int) -> list[Passage]:
    """The evidence (the ranking's first ``evidence_k``), then the next passages from documents not yet in it, until
    ``documents`` documents are covered: what the assessment reads and the responders answer from."""
    picked = list(ranking[:evidence_k])
    docs = {p.doc_id for p in picked}
    for passage in ranking[evidence_k:]:
        if len(docs) >= documents:
            break
        if passage.doc_id not in docs:
            picked.append(passage)
            docs.add(passage.doc_id)
    return picked


class AskFirstProgram(RulesPath, dspy.Module):
    """The composed program: standalone rewrite, retrieval, the lexical and embedding cues, the unnamed-referent check,
    the evidence assessment and divergence, then the route, then the responders (docs/programs/askfirst.md).

    With ``askfirst.policy=fitted`` every stage records its signal (``signals.py``) and the route policy decides once
    (``_decided``); with ``rules`` the hand-set chain of checks decides as it goes (``rules_path.py``), with escalation
    and the debate. Each stage is switched in the ``askfirst`` section (or ``program``); the reply's extras record what every
    stage found.
    """

    def __init__(self, resources, config: AskfirstConfig, program: ProgramConfig, *, notes, debate=None, debate_settings=None,
                 faq_search=None, rrf_k: int = 60, retries: int = 2):
        super().__init__()
        self.resources = Resources.of(resources)
        self.faq_search, self.rrf_k = faq_search, rrf_k
        self.config, self.program_config, self.retries = config, program, retries
        self.rewrite = dspy.Predict(StandaloneQuestion) if config.standalone else None
        self.router = dspy.Predict(RouteComplexity) if config.complexity_router == "lm" else None
        # With every question on the simple path the notes loop never runs: left out, a compile is not offered its
        # predictors (GEPA spent whole rounds on them, finding no trace to reflect on).
        self.retrieval = notes.retrieval if config.complexity_router != "simple" else None
        self.reranker = notes.reranker
        self.referent = dspy.Predict(UnnamedReferent) if config.referent_check else None
        # answer_all's answer: CLARION's planner writes the readings, each is searched, and its writer answers them all.
        readings = config.mode == "answer_all" and config.answer_all_readings
        self.readings = dspy.Predict(ClarifyQuery) if readings else None
        self.write_readings = dspy.Predict(WriteLongAnswer) if readings else None
        # With the readings stage every reading is answered whatever the ambiguity signals say: neither is asked.
        ambiguity = "off" if readings else config.ambiguity
        self.detect = dspy.Predict(AnalyzeAmbiguity) if ambiguity in ("detector", "both", "either") else None
        self.assess = dspy.Predict(AssessEvidence)
        self.passage_answers = dspy.Predict(PassageAnswers) if ambiguity in ("divergence", "both", "either") else None
        self.expand = dspy.Predict(ExpandQuery) if config.escalation else None
        self.debate, self.debate_settings = debate, debate_settings
        self.responders = notes.responders
        self.route_policy: RoutePolicy | None = None  # a compiled program's fitted policy (policy: fitted)

    def forward(self, conversation) -> Reply:
        question, history, warnings = question_and_history(conversation, self.program_config)
        state: dict = {"queries": [], "evidence": [], "ranking": [], "label": None, "confidence": None, "p_answerable": None,
                       "candidates": [], "warnings": warnings, "question": question,
                       "extras": {"stage": None, "standalone_query": question, "rewrite_refused": None, "top_cosine": None, "gated": False, "dangling": None, "topic_switch": None, "referent": None, "referent_cue": None, "faq": None,
                                  "key_terms": {}, "absent_terms": None, "probability_source": None, "ambiguity": {},
                                  "escalated": False, "debate": None, "one_part_partial": None, "unanswerable_overruled": None,
                                  "ungrounded_options": None, "not_readings": None, "repeated_example": None, "echoed_question": None, "no_choice_asked": None, "titled_options": None, "answering_sentences": None}}
        if self.config.policy == "fitted":
            state["turn_index"] = sum(1 for turn in to_turns(conversation)[:-1] if turn.role == "user")
            state["extras"] |= {"cosine_margin": None, "top_cosine_percentile": None, "cue_documents": 0, "question_form": question_form(question), "label_distribution": None,
                                "signals": None, "rules_route": None, "route_probabilities": None}
        try:
            if self.config.policy == "fitted":
                return self._decided(question, history, state)
            return self._answer(question, history, state)
        except StepFailed as exc:
            return Reply.failed(exc, **self._shared(state), **state["extras"])

    def _retrieval(self, question: str, history: str, state: dict) -> tuple[str, str]:
        """The standalone rewrite, the complexity route and the search, recorded in ``state``; returns the query and the
        query the retrieval gate measures."""
        extras = state["extras"]
        query, extras["rewrite_refused"] = self._standalone(question, history)
        extras["standalone_query"], extras["stage"] = query, self._route(query, history)
        searches = self._searches(query, question, history)
        self._retrieve(searches, history, state)
        return query, searches[-1]

    def _decided(self, question: str, history: str, state: dict) -> Reply:
        """``policy: fitted``: every stage records its signal, the route policy decides once, the responder replies."""
        query, gated_query = self._retrieval(question, history, state)
        self._retrieval_signals(gated_query, state)
        self._lexical_signals(question, history, state)
        assessed, options = self._lm_signals(query, question, history, state)
        route = self._decide(question, history, state, assessed)
        return self._reply(route, query, question, history, state, options)

    def _retrieval_signals(self, gated_query: str, state: dict) -> None:
        """The searched query's top dense cosine, its margin over the next nine, and its percentile on the collection's scale."""
        extras = state["extras"]
        extras["top_cosine"], extras["cosine_margin"] = self._cosines(gated_query)
        extras["top_cosine_percentile"] = cosine_percentile(self.resources.store, self.resources.embedder, extras["top_cosine"])

    def _lexical_signals(self, question: str, history: str, state: dict) -> None:
        """The cues no LM reads: a dangling reference, a follow-up's topic switch, a bare "the X" (and how many retrieved
        documents have an X), and the words of the question the collection lacks."""
        extras, said_before = state["extras"], history_text(history)
        extras["dangling"] = unseen_demonstratives(question, said_before) if history else dangling_references(question)
        if history and self.resources.embedder is not None:
            below = self.config.topic_switch_below
            extras["topic_switch"] = switched_referents(question, history, said_before, self.resources.embedder.embed,
                                                        below=-2.0 if below is None else below)
        cue = unnamed_referents(question, said_before) if history else bare_referents(question, max_words=self.config.first_turn_cue_words)
        extras["referent_cue"], extras["cue_documents"] = cue, max((len(documents_with(w, state["ranking"])) for w in cue), default=0)
        if self.config.absent_terms and state["evidence"]:
            extras["absent_terms"] = coverage(question, term_checker(state["ranking"], partial(has_term, self.resources.retriever)), min_words=self.config.absent_terms)

    def _lm_signals(self, query: str, question: str, history: str, state: dict) -> tuple[str, list[str] | None]:
        """The LM's readings: the unnamed-referent check (when on), the evidence assessment and divergence; returns the
        assessment's route and divergence's readings (``None`` when it found none or did not run)."""
        extras = state["extras"]
        if self.referent is not None and state["evidence"]:
            extras["referent"] = self.referent_signal(question, history)
        assessed = self._assess(query, history, state, state["evidence"], top_cosine=extras["top_cosine"], gate=False)
        extras["gated"] = self.gated(extras["top_cosine"])
        options = self._ambiguous(query, history, state) if self.config.ambiguity != "off" and state["evidence"] else None
        return assessed, options

    def _decide(self, question: str, history: str, state: dict, assessed: str) -> str:
        """The one decision: the signals recorded, the rules' route over them kept as a signal and a fallback, and the
        fitted route policy's route where there is one."""
        extras = state["extras"]
        extras["rules_route"] = rules_route(extras, label="UNANSWERABLE" if extras["gated"] else state["label"], follow_up=bool(history), config=self.config,
                                            assessed=self.program_config.unanswerable_route if extras["gated"] else assessed,
                                            unanswerable_route=self.program_config.unanswerable_route)
        extras["signals"] = record_signals(extras, question=question, turn_index=state["turn_index"], evidence=len(state["evidence"]),
                                           rules_route=extras["rules_route"])
        route = extras["rules_route"]
        if self.route_policy is not None:
            route, extras["route_probabilities"] = self.route_policy.route(extras["signals"])
        if route == "clarify" and self.config.mode == "answer_all":  # nothing is asked in answer_all mode
            route = "answer"
        return route

    def _reply(self, route: str, query: str, question: str, history: str, state: dict, options: list[str] | None) -> Reply:
        """The responder of the policy's ``route``: a clarification names divergence's readings where it found them,
        and asks about a dangling reference or a first question's bare "the X" first."""
        extras = state["extras"]
        if route == "clarify":
            state["label"] = "UNDERSPECIFIED"
            if options:
                return Reply(route="clarify", answer=clarifying_question(options), options=options, label="UNDERSPECIFIED",
                             confidence=state["confidence"], **self._shared(state), **extras)
            lead = (dangling_question(extras["dangling"], question) if extras["dangling"]
                    else "" if history else referent_question(extras["referent_cue"]))
            return self._respond("clarify", question, history, state, lead=lead)
        if route == "answer" and self.readings is not None:
            return self._answer_readings(query, state)
        if route == "answer" and options and self.config.mode == "answer_all":
            each = self._answer_each_reading(state)
            if each is not None:
                return each
        return self._respond(route, question, history, state)

    def _cosines(self, query: str) -> tuple[float | None, float | None]:
        """The best dense cosine of ``query`` over the collection, and how far it stands above the mean of the next nine."""
        scores = [score for _, score in self.resources.dense(query, 10)]
        if not scores:
            return None, None
        return scores[0], (scores[0] - sum(scores[1:]) / len(scores[1:])) if len(scores) > 1 else 0.0

    PROBES = ("retrieval", "referent")

    def probe(self, name: str, question: str, history: str, *, rewrite: bool = True) -> dict:
        """A label-free measurement of one question (``askfirst.programs.base.probe``): ``retrieval`` is ``{"query",
        "top_cosine", "gated"}``, the query the retrieval gate measures (the question as written when not ``rewrite``), its
        cosine and whether the gate turns it away; ``referent`` is the unnamed-referent check's record."""
        if name == "referent":
            return self.referent_signal(question, history)
        query = self.search_query(question, history) if rewrite else question
        top_cosine = self.top_cosine(query)
        return {"query": query, "top_cosine": top_cosine, "gated": self.gated(top_cosine)}

    def search_query(self, question: str, history: str) -> str:
        """The query the retrieval gate measures: ``question`` made standalone when there is history and the stage is on
        (with ``follow_up_search=with_previous_turn``, a follow-up searched as written has the previous user turn before it)."""
        query = self._standalone(question, history)[0]
        return self._searches(query, question, history)[-1]

    def _searches(self, query: str, question: str, history: str) -> list[str]:
        """The simple stage's queries, the gate's last: ``query``, and the previous user turn with it where the follow-up is
        searched as the user wrote it and ``follow_up_search`` says so."""
        previous = previous_user_turn(history) if self.config.follow_up_search == "with_previous_turn" else None
        if previous is None or query.strip() != question.strip():
            return [query]
        return [query, f"{previous} {query}"]

    def _standalone(self, question: str, history: str) -> tuple[str, str | None]:
        """The search query and the rewrite refused by ``rewrite_check``, ``rewrite_repeat_check`` or
        ``rewrite_new_words_above`` (``None`` when kept or not made)."""
        if self.rewrite is None or not history:
            return question, None
        out = call_predictor(self.rewrite, "askfirst_standalone", retries=self.retries, conversation_history=history, question=question)
        rewrite = without_copied_tags(str(out.standalone_question or ""), history)
        if not rewrite:
            return question, None
        check = self.config.rewrite_check
        if check != "off" and checked_rewrite(question, rewrite, every_turn=check == "every_turn") is None:
            return question, rewrite
        if self.config.rewrite_repeat_check and (repeats_earlier_turn(question, rewrite, history) or copies_one_of(
                question, rewrite, (str(demo.get("standalone_question", "")) for demo in self.rewrite.demos))):
            return question, rewrite
        above = self.config.rewrite_new_words_above
        if above is not None and mostly_new_words(rewrite, f"{history} {question}", above=above):
            return question, rewrite
        return rewrite, None

    def top_cosine(self, query: str) -> float | None:
        """The retrieval gate's signal: the best dense cosine of ``query`` over the collection (``None`` without a dense index)."""
        hits = self.resources.dense(query, 1)
        return hits[0][1] if hits else None

    def referent_signal(self, question: str, history: str) -> dict:
        """The unnamed-referent check on the user's own question and the conversation: ``{"unnamed", "label",
        "p_underspecified", "source", "flagged"}``. P(UNDERSPECIFIED) comes from the label's log-probabilities where the
        LM measures them (else 1 or 0 from the label written); with ``referent_threshold`` set it decides, else the label."""
        config = label_scoring_config(self.referent, enabled=self.program_config.label_logprobs)
        out = call_predictor(self.referent, "askfirst_referent", retries=self.retries, config=config, conversation_history=history,
                             question=question)
        dist = label_distribution(out, get_args(ReferentLabel))
        p_under = dist["UNDERSPECIFIED"] if dist else float(out.label == "UNDERSPECIFIED")
        threshold = self.config.referent_threshold
        flagged = out.label == "UNDERSPECIFIED" if threshold is None or dist is None else p_under >= threshold
        return {"unnamed": str(out.unnamed or "").strip(), "label": out.label, "p_underspecified": p_under,
                "source": "logprobs" if dist else "generated", "flagged": flagged}

    def gated(self, top_cosine: float | None) -> bool:
        """Whether the retrieval gate turns away a query of this ``top_cosine`` (never with no threshold or no dense index)."""
        threshold = self.config.min_top_cosine
        return threshold is not None and top_cosine is not None and top_cosine < threshold

    def _route(self, query: str, history: str) -> str:
        if self.router is None:
            return self.config.complexity_router
        return call_predictor(self.router, "askfirst_router", retries=self.retries, conversation_history=history, question=query).complexity

    def _retrieve(self, queries: list[str], history: str, state: dict) -> None:
        k, query = self.program_config.rerank_candidates, queries[0]
        if state["extras"]["stage"] == "complex":
            found = self.retrieval(question=query, conversation_history=history)
            pool, state["queries"] = found.passages, list(found.queries)
        else:
            pool, state["queries"] = self.resources.search(queries, max(k, 10)), list(queries)
        if self.faq_search is not None:
            faq_hits = self.faq_search(query, self.config.faq_k)
            state["extras"]["faq"] = [entry.passage_id for entry in faq_hits]
            pool = fuse_faq_hits(pool, faq_hits, k=self.rrf_k)
        head = pool[:k]
        if self.reranker is not None and head:
            head = self.reranker(question=query, passages=head).passages
        shown = {p.passage_id for p in head}
        state["ranking"] = head + [p for p in pool if p.passage_id not in shown]
        state["evidence"] = assessed_passages(state["ranking"], evidence_k=self.program_config.evidence_k, documents=self.config.divergence_passages)

    def _assess(self, query: str, history: str, state: dict, passages: list[Passage], *, top_cosine: float | None, gate: bool = True) -> str:
        """Label answerability from ``passages`` (recording what is asked about and the key-term check); returns the
        label's route. A ``top_cosine`` below the gate's threshold is UNANSWERABLE with no LM call. With ``key_terms``
        (N), a question with N or more asked-about words in no retrieved passage is UNANSWERABLE, unless the assessment or
        the collection check (which comes first) already called it PARTIAL (whose missing part is expected to be absent;
        with ``one_part_key_terms`` only on a question of more than one part)."""
        state["extras"]["gated"] = gate and self.gated(top_cosine)
        if state["extras"]["gated"]:
            state["label"], state["confidence"], state["p_answerable"] = "UNANSWERABLE", 1.0, 0.0
            return self.program_config.unanswerable_route
        if not passages:
            state["label"], state["confidence"], state["p_answerable"] = "UNANSWERABLE", 1.0, 0.0
            return "idk"
        config = label_scoring_config(self.assess, enabled=self.program_config.label_logprobs)
        out = call_predictor(self.assess, "askfirst_assess", retries=self.retries, config=config, conversation_history=history,
                             question=query, passages=format_passages(passages, max_chars=self.program_config.passage_chars))
        by_id = {p.passage_id: p for p in passages}
        label = out.label
        # The searched query's cosine, on escalation too (not the expansion's): the threshold was chosen on it.
        searched, below = state["extras"]["top_cosine"], self.config.label_unanswerable_below
        if label == "UNANSWERABLE" and below is not None and searched is not None and searched >= below:
            state["extras"]["unanswerable_overruled"] = searched  # the collection holds something close to the question
            label = "ANSWERABLE"
        state["extras"]["answering_sentences"] = [str(s) for s in out.answering_sentences or []]
        confidence, p_answer, state["extras"]["probability_source"] = label_probability(out, label, generated=out.confidence)
        if "label_distribution" in state["extras"]:  # policy: fitted reads every label's probability
            state["extras"]["label_distribution"] = label_distribution(out, LABELS) or {
                lab: confidence if lab == out.label else (1 - confidence) / (len(LABELS) - 1) for lab in LABELS}
        # A question of one part has no part left unanswered: its PARTIAL is taken as ANSWERABLE. With
        # one_part_key_terms before the key-term check, which exempts PARTIAL (its missing part is expected to be absent).
        one_part = label == "PARTIAL" and self.config.partial_needs_parts and len(question_parts(state["question"])) < 2
        if one_part:
            state["extras"]["one_part_partial"] = "ANSWERABLE"
        if one_part and self.config.one_part_key_terms:
            label = "ANSWERABLE"
        asked = str(out.asked_about or "").strip()
        # An asked_about that only repeats its own field description names nothing the question asks about.
        echo = echoes(asked, self.assess.signature.output_fields["asked_about"].json_schema_extra["desc"])
        # Against everything retrieved, not only the passages read: a word the evidence lacks but the ranking has is
        # a paraphrase away ("start" / "starts"), not a thing the collection never mentions.
        pool = passages + [p for p in state["ranking"] if p.passage_id not in by_id]
        fitted = self.config.policy == "fitted"  # it reads the count as a signal, whatever key_terms says
        missing = unmatched_terms(asked, pool) if (self.config.key_terms or fitted) and not echo else []
        elsewhere = []
        if self.config.key_terms_in_turn:  # the 1.5B often names an earlier turn's question as what is asked about
            turn = content_stems(f"{state['question']} {query}")
            elsewhere = [w for w in missing if stem(w) not in turn]
            missing = [w for w in missing if stem(w) in turn]
        state["extras"]["key_terms"] = {"asked_about": asked, "echo": echo, "missing": missing, "not_in_turn": elsewhere, "overruled": None}
        # The collection check first: it reads the user's own parts, and a question with one part covered and one the
        # collection never mentions is PARTIAL, which the key-term check then exempts. The other way round, the demo's
        # "What is the lab fee, and does the university sell used lab textbooks?" became "I don't know": the 1.5B named
        # the whole question as asked about, and "sell" and "textbooks" are in no passage.
        absent = state["extras"]["absent_terms"]
        if absent and absent["verdict"] == "some" and label in ("ANSWERABLE", "UNDERSPECIFIED"):
            absent["overruled"] = label  # a part of it is about something the collection never mentions
            label = "PARTIAL"
        if self.config.key_terms and len(missing) >= self.config.key_terms and label in ("ANSWERABLE", "UNDERSPECIFIED"):
            state["extras"]["key_terms"]["overruled"] = label  # nothing the passages say backs that label
            label, confidence, p_answer = "UNANSWERABLE", 1.0, 0.0
        elif one_part and label == "PARTIAL":  # one_part_key_terms off: it kept PARTIAL's exemption from the check above
            label = "ANSWERABLE"
        state["label"], state["confidence"], state["p_answerable"] = label, confidence, p_answer
        route = route_for(label, confidence, threshold=self.program_config.answer_threshold, p_answer=p_answer)
        return self.program_config.unanswerable_route if route == "idk" else route

    def _ambiguous(self, query: str, history: str, state: dict) -> list[str] | None:
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
        if self.passage_answers is not None:
            conversation = history if self.config.conversation_names else ""
            form = question_form(query) if self.config.factoid_divergence else "fact"
            parts, asked_kind = len(question_parts(query)), answer_type(query)
            if history and not self.config.follow_up_divergence:  # the conversation has picked the reading
                record["divergence"] = {"diverges": False, "follow_up": True}
            elif form != "fact":  # an explanation, procedure or yes-with-reasons differs per passage whatever the reading
                record["divergence"] = {"diverges": False, "form": form}
            elif parts >= 2 and not self._multipart_diverges(asked_kind):  # passages answering different parts differ too
                record["divergence"] = {"diverges": False, "parts": parts}
            # the question (or the conversation) names its reading: the guard would discard any divergence, so no call
            elif self.config.skip_named and (named := named_reading(query, conversation, state["evidence"])):
                record["divergence"] = {"diverges": False, "named": named[1], "named_in": named[0]}
            else:
                state["candidates"] = self._candidates(query, state["evidence"])
                kind = asked_kind if self.config.typed_divergence else None
                topic = rarest_word(query, partial(document_frequency, self.resources.retriever)) if self.config.divergence_rarest_word else None
                options = divergent_options(state["candidates"], query, conversation=conversation, kind=kind, topic_word=topic)
                record["divergence"] = {"diverges": bool(options), "candidates": {p.passage_id: a for p, a in state["candidates"]}}
                if kind:
                    record["divergence"]["answer_type"] = kind
                if topic:
                    record["divergence"]["rarest_word"] = topic
            record["options"] = options
            signals.append(bool(options))
        if not signals:
            return None
        ambiguous = all(signals) if self.config.ambiguity == "both" else any(signals)
        record["ambiguous"] = ambiguous
        if not ambiguous:
            return None
        return options or (aspects if len(aspects) >= 2 else [])

    def _multipart_diverges(self, asked_kind: str | None) -> bool:
        """Whether divergence is asked of a question of two or more parts (``multipart_divergence``) whose parts ask
        for ``asked_kind`` (``answer_type``: "time", "quantity", or ``None`` for different or other kinds)."""
        mode = self.config.multipart_divergence
        return mode == "always" or (mode == "same_kind" and asked_kind is not None)

    def _candidates(self, query: str, passages: list[Passage]) -> list[tuple[Passage, str]]:
        """The answer each passage alone gives (its own LM call: as a trailing output of the assessment, the offline
        1.5B listed only the first passage, and divergence never fired on the demo's ambiguous questions)."""
        out = call_predictor(self.passage_answers, "askfirst_passage_answers", retries=self.retries, question=query,
                             passages=format_passages(passages, max_chars=self.program_config.passage_chars))
        by_id = {p.passage_id: p for p in passages}
        return [(by_id[pid], str(a.get("answer", ""))) for a in out.passage_answers or []
                if (pid := str(a.get("passage_id", "")).strip("[] ")) in by_id]

    def _answer_each_reading(self, state: dict) -> Reply | None:
        """``answer_all``: every reading answered by the passage that gives it ("title: answer"), citing that passage
        (``None`` when the readings are not documents of the evidence: the detector's aspects are answered as usual)."""
        readings = []
        for passage, answer in state["candidates"]:
            title = reading_name(passage)
            if title in state["extras"]["ambiguity"].get("options", []) and title not in {t for t, _, _ in readings}:
                readings.append((title, answer.strip(), passage.passage_id))
        if not readings:
            return None
        answer = " ".join(f"{title}: {text} [{pid}]." for title, text, pid in readings)
        return Reply(route="answer", answer=answer, citations=[pid for _, _, pid in readings], options=[t for t, _, _ in readings],
                     label=state["label"], confidence=state["confidence"], **self._shared(state), **state["extras"])

    def _answer_readings(self, query: str, state: dict) -> Reply:
        """``answer_all``: CLARION's planner rewrites the question into its readings on the evidence, each reading is
        searched (no LM call), and CLARION's writer answers every reading its passages support, in one long answer."""
        chars = self.program_config.passage_chars
        view = format_passages(state["evidence"], max_chars=chars)
        out = call_predictor(self.readings, "askfirst_readings", retries=self.retries, query=query,
                             analysis="Not analysed: write the readings the passages tell apart.", passages=view)
        readings = list(dict.fromkeys(r.strip() for r in out.clarified_queries or [] if r.strip()))[:MAX_READINGS] or [query]
        found = [self.resources.search([r], self.program_config.evidence_k) for r in readings]
        described = "\n\n".join(f"{i}. {r}\n{format_passages(f, max_chars=chars)}" for i, (r, f) in enumerate(zip(readings, found), start=1))
        final = call_predictor(self.write_readings, "askfirst_answer_readings", retries=self.retries, query=query, interpretations=described)
        searched = {p.passage_id: p for f in found for p in f}
        passages = list(searched.values())
        state["evidence"] = passages + [p for p in state["evidence"] if p.passage_id not in searched]
        return Reply(route="answer", answer=final.long_answer, citations=[p.passage_id for p in passages], options=readings,
                     label=state["label"], confidence=state["confidence"], p_answerable=state["p_answerable"],
                     **self._shared(state), **state["extras"])

    def _respond(self, route: str, question: str, history: str, state: dict, *, lead: str = "") -> Reply:
        """The responder of ``route`` on the evidence; ``lead`` (a sentence of the program's own) opens the reply."""
        passages_text = format_passages(state["evidence"], max_chars=self.program_config.passage_chars)
        absent = state["extras"]["absent_terms"]
        if route == "partial" and absent and absent["verdict"] == "some":
            # The collection check knows which parts are missing: the covered ones get a complete answer (the 1.5B's
            # partial responder, left to find the split itself, answered the missing part and called the other missing).
            covered, missing = ("; ".join(p["part"] for p in absent["parts"] if p["covered"] is want) for want in (True, False))
            reply = self.responders(route="answer", question=covered, conversation_history=history, passages_text=passages_text,
                                    passage_ids=[p.passage_id for p in state["evidence"]])
            reply.answer, reply.missing = partial_reply(reply.answer, missing), missing
        else:
            reply = self.responders(route=route, question=question, conversation_history=history, passages_text=passages_text,
                                    passage_ids=[p.passage_id for p in state["evidence"]])
        options, answer = (self._checked_clarification(reply.options, reply.answer, question, history, state, lead=lead)
                           if route == "clarify" else (reply.options, reply.answer))
        # A responder that already opens with the lead's question ("Which fee do you mean?") is not made to ask it twice.
        answer = f"{lead} {answer}".strip() if lead and not answer.lower().startswith(lead.lower()) else answer
        return Reply(route=route, answer=answer, citations=reply.citations, missing=reply.missing, options=options,
                     label=state["label"], confidence=state["confidence"], p_answerable=state["p_answerable"], **self._shared(state),
                     **state["extras"])

    def _checked_clarification(self, options: list[str], answer: str, question: str, history: str, state: dict, *,
                               lead: str) -> tuple[list[str], str]:
        """The clarification responder's ``options`` and question, checked against the passages and the user's words:
        what it offers that names no reading is dropped, with the question that lists it; with fewer than two readings
        left, or kinds of the thing, the titled documents of the kind the question leaves unnamed are offered."""
        passages, said = state["evidence"] + state["ranking"], f"{history} {question}"
        ungrounded, unnamed = ungrounded_options(options, passages, said), not_readings(options, question)
        kept = list({o.lower(): o for o in options if o not in ungrounded and o not in unnamed}.values())  # once each
        copied = repeated_example(answer, self.responders.clarify.signature.instructions, passages, f"{said} {' '.join(kept)}")
        state["extras"]["ungrounded_options"], state["extras"]["not_readings"] = ungrounded, unnamed
        state["extras"]["repeated_example"] = copied
        # An option listed twice is no choice: the 1.5B offered "the pet policy" six times (MTRAG-UN training half).
        repeated = len({o.lower() for o in options}) < len(options)
        # The user's own question returned as the clarifying one asks nothing: "What documentation is needed to apply
        # for the loan?" (MTRAG-UN validation half).
        state["extras"]["echoed_question"] = echoed = same_words(answer, question)
        state["extras"]["no_choice_asked"] = no_choice = len(kept) >= 2 and not asks_which(answer, kept)
        if ungrounded or unnamed or copied or repeated or echoed or no_choice:  # not the choice the passages offer: the question that lists them is not asked
            options = kept
            answer = clarifying_question(options) if len(options) >= 2 else "" if lead else UNSAID_CHOICE
        # Fewer than two readings named, or kinds of the thing: the documents of the kind the question leaves unnamed
        # are the choice.
        titled = titled_readings(self._unnamed_kind(state["extras"], question), passages)
        replace = len(titled) >= 2 and (len(kept) < 2 or names_kinds(kept, question, titled))
        state["extras"]["titled_options"] = titled if replace else None
        return (titled, clarifying_question(titled)) if replace else (options, answer)

    @staticmethod
    def _unnamed_kind(extras: dict, question: str) -> list[str]:
        """The words that name the kind of thing a clarification asks which one of: a dangling demonstrative phrase's
        last word ("flag"), the switched topic's words or the referent cue's; empty when no lexical check asked (the
        assessment's or divergence's clarification) or a pronoun did, which names no kind."""
        if extras["dangling"]:
            kind = dangling_kind(extras["dangling"], question)
            return [kind] if kind else []
        if extras["topic_switch"] and extras["topic_switch"]["switched"]:
            return list(extras["topic_switch"]["words"])
        return list(extras["referent_cue"] or [])

    @staticmethod
    def _shared(state: dict) -> dict:
        return {"evidence": state["evidence"], "ranking": state["ranking"] or state["evidence"], "queries": state["queries"],
                "warnings": state["warnings"]}
