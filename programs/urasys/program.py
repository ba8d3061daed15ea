"""URASys's Manager (Algorithm 1): decompose, run the FAQ and document agents concurrently, pool the
evidence, and answer, ask, refine and retry, or report that nothing was found."""

from __future__ import annotations

import dspy

from askfirst.config import ProgramConfig
from askfirst.programs.urasys.config import UrasysConfig
from askfirst.programs.base import Reply, Resources
from askfirst.programs.common.conversation import format_passages, question_and_history
from askfirst.programs.common.responders import Responders, clarifying_question
from askfirst.programs.common.robust import StepFailed, call_predictor
from askfirst.programs.common.routes import ROUTE_TO_LABEL
from askfirst.programs.urasys.search_agent import AgentReport, DocumentSearchAgent, FAQSearchAgent
from askfirst.signatures.urasys_agents import DecomposeQuestion, JudgeEvidence


def manager_route(question_kind: str, evidence_state: str, *, attempt: int, max_attempts: int, ask_when_vague: bool = False) -> str:
    """Algorithm 1's decision as a route: ``answer``, ``partial``, ``clarify``, ``idk``, or ``refine`` (search again).

    The paper's three gates come first, in its order. It leaves two cases open, decided here so the
    manager always ends: a direct answer to a broad question is given (the evidence settles it), and
    several categories behind a specific question are asked about. Partial evidence gives a partial answer.
    With ``ask_when_vague`` a question still vague after the last round is asked about rather than
    reported as unanswerable (the paper's text: clarification "to refine the user query").
    """
    if question_kind == "specific" and evidence_state == "direct_answer":
        return "answer"
    if question_kind == "broad" and evidence_state == "several_categories":
        return "clarify"
    if question_kind == "vague" or evidence_state == "insufficient":
        if attempt + 1 < max_attempts:
            return "refine"
        return "clarify" if ask_when_vague and question_kind == "vague" else "idk"
    return {"direct_answer": "answer", "partial_answer": "partial", "several_categories": "clarify"}[evidence_state]


def no_information_message(attempts: int) -> str:
    return (f"I don't know: after {attempts} search round{'s' * (attempts != 1)} of the FAQs and documents I found no "
            "information that answers this.")


def distinct_categories(categories: list) -> list[str]:
    """The categories in order with blanks and repeats dropped (the LM lists a category it saw twice twice)."""
    seen = {}
    for category in (str(c).strip() for c in categories):
        if category:
            seen.setdefault(category.casefold(), category)
    return list(seen.values())


def format_evidence(reports: list[AgentReport]) -> str:
    lines = []
    for r in reports:
        ids = ", ".join(p.passage_id for p in r.passages)
        lines.append(f"- {r.source} agent, query {r.query!r}: {r.findings}" + (f" (from {ids})" if ids else ""))
    return "\n".join(lines) or "(no evidence)"


class URASysProgram(dspy.Module):
    """The URASys program: a Manager over per-sub-query teams of an FAQ and a document search agent.

    Args:
        faq_search: ``search(query, k) -> list[Passage]`` over the FAQ collection (``None`` when the agent is off).
        document_search: The same over the document collection.
        config: The ``urasys`` section (switches, T, k's).
        program: The ``program`` section (question cut, history turns, passage length).
    """

    def __init__(self, *, faq_search, document_search, config: UrasysConfig, program: ProgramConfig, retries: int = 2):
        super().__init__()
        if not (config.faq_agent or config.document_agent):
            raise ValueError("URASys needs at least one of urasys.faq_agent and urasys.document_agent")
        self.config, self.program_config, self.retries = config, program, retries
        self.decompose = dspy.Predict(DecomposeQuestion) if config.decomposition else None
        self.faq_agent = FAQSearchAgent(faq_search, k=config.faq_k, max_attempts=config.faq_agent_attempts,
                                        passage_chars=program.passage_chars, retries=retries) if config.faq_agent else None
        self.document_agent = DocumentSearchAgent(document_search, k=config.document_k, max_attempts=config.document_agent_attempts,
                                                  passage_chars=program.passage_chars, retries=retries) if config.document_agent else None
        self.judge = dspy.Predict(JudgeEvidence)
        self.responders = Responders(retries=retries)

    def forward(self, conversation) -> dspy.Prediction:
        question, history, warnings = question_and_history(conversation, self.program_config)
        state: dict = {"queries": [], "reports": [], "evidence": [], "label": None, "attempts": 0}
        try:
            return self._manage(question, history, state, warnings)
        except StepFailed as exc:
            return self._prediction("error", f"(failed: {exc})", state, warnings + [str(exc)])

    def _sub_queries(self, query: str, history: str) -> list[str]:
        if self.decompose is None:
            return [query]
        out = call_predictor(self.decompose, "decompose", retries=self.retries, conversation_history=history, question=query)
        subs = [s.strip() for s in out.sub_queries or [] if s.strip()]
        return list(dict.fromkeys(subs)) or [query]

    def _gather(self, sub_queries: list[str]) -> list[AgentReport]:
        """Every agent on every sub-query, concurrently; ``dspy.Parallel`` carries DSPy's settings into its threads."""
        agents = [a for a in (self.faq_agent, self.document_agent) if a is not None]
        pairs = [(agent, {"query": q}) for q in sub_queries for agent in agents]
        # A generous timeout: on a CPU a slow agent is not a straggler to be run a second time.
        results = dspy.Parallel(num_threads=self.config.threads, disable_progress_bar=True, timeout=24 * 3600)(pairs)
        return [r for r in results if r is not None]  # an agent that raised is logged by Parallel and contributes nothing

    def _manage(self, question: str, history: str, state: dict, warnings: list[str]) -> dspy.Prediction:
        query, route, judged = question, "idk", None
        for attempt in range(self.config.max_attempts):
            state["attempts"] = attempt + 1
            subs = self._sub_queries(query, history)
            reports = self._gather(subs)
            state["queries"] += [s for r in reports for s in r.searches]
            state["reports"] += reports
            warnings += [r.warning for r in reports if r.warning]
            pooled = {p.passage_id: p for r in reports for p in r.passages}
            state["evidence"] = list(pooled.values())
            judged = call_predictor(self.judge, "manager_decision", retries=self.retries, conversation_history=history,
                                    question=query, evidence=format_evidence(reports))
            route = manager_route(judged.question_kind, judged.evidence_state, attempt=attempt, max_attempts=self.config.max_attempts,
                                  ask_when_vague=self.config.ask_when_vague)
            if route != "refine":
                break
            query = (judged.refined_question or "").strip() or query
        state["label"] = ROUTE_TO_LABEL.get(route)
        if route == "idk":
            return self._prediction("idk", no_information_message(state["attempts"]), state, warnings)
        categories = distinct_categories(judged.categories or []) if judged is not None else []
        if route == "clarify" and len(categories) >= 2:
            return self._prediction("clarify", clarifying_question(categories), state, warnings, options=categories)
        evidence = state["evidence"]
        # The answer is written from the pooled evidence E: the agents' grounded findings first, then what they found.
        pooled = f"Findings of the search agents:\n{format_evidence(state['reports'])}\n\nPassages:\n" + format_passages(
            evidence, max_chars=self.program_config.passage_chars)
        reply = self.responders(route=route, question=question, conversation_history=history, passages_text=pooled,
                                passage_ids=[p.passage_id for p in evidence])
        return self._prediction(route, reply.answer, state, warnings, citations=reply.citations, missing=reply.missing, options=reply.options)

    @staticmethod
    def _prediction(route, answer, state, warnings, *, citations=(), missing="", options=()) -> Reply:
        return Reply(route=route, answer=answer, citations=citations, missing=missing, options=options, evidence=state["evidence"],
                     label=state["label"], queries=state["queries"], warnings=warnings, notes=format_evidence(state["reports"]),
                     attempts=state["attempts"])


def build_urasys(config, resources: Resources) -> URASysProgram:
    """URASys on the corpus's store: its agents search the unit and FAQ collections ``prepare_index`` built beside it.

    Raises:
        DataError: A collection the configured agents need is empty (the index was not built).
    """
    from askfirst.programs.urasys.index import FAQ, UNITS, augmented_parts, augmented_search

    store = resources.store
    if store is None:
        raise ValueError("the URASys program needs the corpus's store, to open its FAQ and unit collections")

    u, parts = config.urasys, augmented_parts(config.urasys)  # the collections prepare_index built for these agents
    documents = augmented_search(config, store, UNITS) if UNITS in parts else (lambda query, k: resources.search([query], k))
    return URASysProgram(faq_search=augmented_search(config, store, FAQ) if FAQ in parts else None, document_search=documents if u.document_agent else None,
                         config=u, program=config.program, retries=config.lm.parse_retries)
