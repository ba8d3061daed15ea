"""CLARION: a planning agent maps out the readings of a question before an acting agent gathers evidence per reading."""

from __future__ import annotations

import dspy

from askfirst.config import ProgramConfig
from askfirst.programs.clarion.config import ClarionConfig
from askfirst.programs.base import Reply, Resources
from askfirst.programs.common.conversation import format_passages, question_and_history, with_history
from askfirst.programs.common.robust import StepFailed, call_predictor
from askfirst.programs.common.routes import IDK_MESSAGE
from askfirst.retrieval.chunking import Passage
from askfirst.signatures.clarion import ActStep, AnalyzeAmbiguity, ClarifyQuery, WriteLongAnswer
from askfirst.signatures.urasys_agents import DecomposeQuestion

UNRESOLVED = "unresolved"


class ClarionProgram(dspy.Module):
    """Planning agent (detect and type ambiguity, clarify into interpretations), then an acting loop.

    The acting agent's actions are structured outputs (SEARCH / PLAN / ANSWER), never parsed from free
    text. A repeated search is suppressed, and when the step budget is spent the answer is written anyway.
    An interpretation without evidence is reported as unresolved, never guessed.

    Args:
        resources: The shared :class:`Resources` (or a bare retriever with ``search_many(queries, k) -> list[Hit]``).
        config: The ``clarion`` section; ``program`` supplies passage and question limits.
    """

    def __init__(self, resources, config: ClarionConfig, program: ProgramConfig, *, retries: int = 2):
        super().__init__()
        self.config = config
        self.program_config = program
        self.resources = Resources.of(resources)
        self.retries = retries
        self.analyze = dspy.Predict(AnalyzeAmbiguity)
        self.clarify = dspy.Predict(ClarifyQuery)
        self.act = dspy.Predict(ActStep)
        self.write = dspy.Predict(WriteLongAnswer)
        self.decompose = dspy.Predict(DecomposeQuestion) if config.decomposition else None

    def _collection_view(self, question: str) -> str:
        """The top passages for the question itself, so that the readings are ones the collection can tell apart."""
        if not self.config.grounded_planning:
            return ""
        found = self.resources.search([question], self.config.search_k)
        return format_passages(found, max_chars=self.program_config.passage_chars)

    def _plan(self, question: str) -> tuple[list[str], dict]:
        if not self.config.detection:
            return [question], {"is_ambiguous": None, "ambiguity_type": None}
        view = self._collection_view(question)
        analysis = call_predictor(self.analyze, "clarion_detect", retries=self.retries, query=question, passages=view)
        info = {"is_ambiguous": analysis.is_ambiguous, "ambiguity_type": analysis.ambiguity_type}
        if not analysis.is_ambiguous or analysis.ambiguity_type == "none" or not self.config.clarification:
            return [question], info
        text = f"type: {analysis.ambiguity_type}; aspects: {'; '.join(analysis.ambiguous_aspects)}; needed: {analysis.clarification_needed}"
        clarified = call_predictor(self.clarify, "clarion_clarify", retries=self.retries, query=question, analysis=text, passages=view)
        readings = list(dict.fromkeys(q.strip() for q in clarified.clarified_queries if q.strip()))
        return (readings if len(readings) >= 2 else [question]), info

    def _hops(self, reading: str, hop_cache: dict[str, list[str]]) -> list[str]:
        """With ``clarion.decomposition``: the reading as ordered single-hop sub-questions (asked once per reading and call)."""
        if self.decompose is None:
            return []
        if reading not in hop_cache:
            out = call_predictor(self.decompose, "clarion_decompose", retries=self.retries, conversation_history="", question=reading)
            hops = list(dict.fromkeys(h.strip() for h in out.sub_queries or [] if h.strip()))
            hop_cache[reading] = hops if len(hops) > 1 else []
        return hop_cache[reading]

    def _describe(self, readings: list[str], evidence: list[list[Passage]], hop_cache: dict[str, list[str]]) -> str:
        chars = self.program_config.passage_chars
        blocks = []
        for i, (reading, found) in enumerate(zip(readings, evidence, strict=True), start=1):
            body = format_passages(found, max_chars=chars) if found else "(no evidence yet)"
            hops = self._hops(reading, hop_cache)
            steps = ("   answer in order: " + " -> ".join(hops) + "\n") if hops else ""
            blocks.append(f"{i}. {reading}\n{steps}{body}")
        return "\n\n".join(blocks)

    def forward(self, conversation) -> Reply:
        question, history, warnings = question_and_history(conversation, self.program_config)
        query = with_history(question, history)  # an earlier turn can settle (or create) the ambiguity
        trace: list[str] = []
        try:
            readings, info = self._plan(query)
            if self.config.mode == "ask_first" and len(readings) > 1:
                ask = "Your question can be read in more than one way. Do you mean: " + "; or ".join(r.rstrip("?") for r in readings) + "?"
                return Reply(route="clarify", answer=ask, options=readings, warnings=warnings, interpretations=readings,
                             short_answers=[], trace=trace, **info)
            return self._act(query, readings, info, trace, warnings)
        except StepFailed as exc:
            return Reply.failed(exc, warnings=warnings, interpretations=[], short_answers=[], trace=trace,
                                is_ambiguous=None, ambiguity_type=None)

    def _act(self, question: str, readings: list[str], info: dict, trace: list[str], warnings: list[str]) -> Reply:
        hop_cache: dict[str, list[str]] = {}
        evidence: list[list[Passage]] = [[] for _ in readings]
        searched: set[str] = set()
        for step in range(self.config.max_iterations - 1):  # the last step is reserved for ANSWER
            act = call_predictor(self.act, "clarion_act", retries=self.retries, query=question,
                                 interpretations=self._describe(readings, evidence, hop_cache), context="\n".join(trace),
                                 searches_left=self.config.max_iterations - 1 - step)
            arg = (act.argument or "").strip()
            if act.action == "ANSWER":
                trace.append("ANSWER")
                break
            if act.action == "PLAN":
                if arg and arg not in readings:
                    readings.append(arg)
                    evidence.append([])
                trace.append(f"PLAN[{arg}]")
                continue
            if not arg or arg.lower() in searched:
                trace.append(f"SEARCH[{arg}] suppressed: already searched")
                continue
            searched.add(arg.lower())
            target = min(max(int(act.interpretation_number or 1), 1), len(readings)) - 1
            hits = self.resources.search([arg], self.config.search_k)
            known = {p.passage_id for p in evidence[target]}
            evidence[target].extend(p for p in hits if p.passage_id not in known)
            trace.append(f"SEARCH[{arg}] for {target + 1}: {', '.join(p.passage_id for p in hits) or 'nothing'}")
        queries = [t[len("SEARCH["):t.index("]")] for t in trace if t.startswith("SEARCH[") and "suppressed" not in t]
        if not any(evidence):
            return Reply(route="idk", answer=IDK_MESSAGE, queries=queries, warnings=warnings, interpretations=readings,
                         short_answers=[UNRESOLVED] * len(readings), trace=trace, **info)
        final = call_predictor(self.write, "clarion_answer", retries=self.retries, query=question,
                               interpretations=self._describe(readings, evidence, hop_cache))
        shorts = list(final.short_answers) + [UNRESOLVED] * len(readings)
        # A reading with no evidence is unresolved whatever the writer said: no guessing.
        shorts = [s if found else UNRESOLVED for s, found in zip(shorts, evidence)]
        passages = list({p.passage_id: p for found in evidence for p in found}.values())
        return Reply(route="answer", answer=final.long_answer, citations=[p.passage_id for p in passages], evidence=passages,
                     queries=queries, warnings=warnings, interpretations=readings, short_answers=shorts, trace=trace, **info)
