"""The askfirst program's config section (``askfirst``): which stages run, and who decides the route."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from askfirst.config import ConfigSection


class AskfirstConfig(ConfigSection):
    """The composed program (program.kind=askfirst). Every stage is a switch, so an ablation is a config change; the notes
    loop, re-ranker and responders it composes keep their ``program`` settings. What each setting moved is on the results
    page."""

    # The decision
    policy: Literal["rules", "fitted"] = Field(
        "rules", description="Who decides the route: 'rules', the hand-set chain of checks; 'fitted', every stage records its signal "
        "and the compiled program's route policy decides (the rules over the same signals until one is fitted).")
    mode: Literal["ask_first", "answer_all"] = Field(
        "ask_first", description="ask_first: an ambiguous question gets a clarifying question; answer_all: nothing is asked and every "
        "reading is answered (ASQA-style benchmarks).")

    # 1. The standalone question
    standalone: bool = Field(True, description="Rewrite a follow-up into a self-contained question before retrieval (off: search the last turn).")
    rewrite_check: Literal["off", "questions", "every_turn"] = Field(
        "questions", description="Search the user's turn instead of a rewrite that is no question: 'questions' for a turn that ends "
        "with '?', 'every_turn' for any turn (true/false mean questions/off).")
    rewrite_repeat_check: bool = Field(True, description="Search the user's turn instead of a rewrite that repeats an earlier user turn "
                                       "or a demonstration's rewrite word for word.")
    rewrite_new_words_above: float | None = Field(
        None, ge=0, le=1, description="Search the user's turn instead of a rewrite with more than this share of content words no turn "
        "has (a translation, an answer); null: off.")
    follow_up_search: Literal["turn", "with_previous_turn"] = Field(
        "turn", description="A follow-up searched as written is searched alone ('turn') or also after the previous user turn, fused "
        "by RRF ('with_previous_turn').")

    # 2. Retrieval
    complexity_router: Literal["lm", "simple", "complex"] = Field(
        "lm", description="R2RAG's router: simple -> one hybrid search, complex -> the notes loop; or force one.")
    faq: bool = Field(False, description="Also search URASys's FAQ collection of the corpus (built by `askfirst index --augment`) and "
                      "fuse it into the ranking by document.")
    faq_k: int = Field(10, ge=1, le=100, description="FAQ entries searched per query when `faq` is on.")
    divergence_passages: int = Field(4, ge=2, le=8, description="Documents the assessment reads: the evidence, then the next passages "
                                     "of the ranking from other documents.")

    # 3. Lexical and embedding signals (no LM call)
    dangling_reference: bool = Field(True, description="Ask who or what is meant when a first question points at something it never "
                                     "names ('When did he return to work?', 'this state library').")
    dangling_follow_up: bool = Field(True, description="The same for a follow-up whose demonstrative phrase opens with a word no earlier "
                                     "turn has ('this tricolor flag' after turns about Medicare).")
    topic_switch_below: float | None = Field(
        0.125, ge=-1, le=1, description="Ask which is meant when a follow-up names a new thing only by its kind ('the loan') and its "
        "best cosine to every earlier user turn is below this (the embedder's scale); null: off.")
    absent_terms: int = Field(2, ge=0, le=10, description="The collection check: a part of the question with this many content words "
                              "that no retrieved passage nor the collection has is not covered (none covered: UNANSWERABLE, some: PARTIAL); 0: off.")
    min_top_cosine: float | None = Field(
        None, ge=-1, le=1, description="The retrieval gate (MAF-RAG's VOR confidence): below this top dense cosine of the searched query "
        "the question is UNANSWERABLE; null: off. Corpus- and embedder-specific.")
    referent_cue: bool = Field(True, description="Ask rather than say 'I don't know' when a follow-up puts 'the' before a word no earlier "
                               "turn has ('the loan'): the user may mean one the collection has.")
    first_turn_cue_words: int = Field(3, ge=0, description="The referent cue on a first question that names nothing but one 'the X' in "
                                      "at most this many content words ('How much is the fee?'); 0: follow-ups only.")
    first_turn_cue_answered: bool = Field(True, description="Apply the first-turn cue to an answered question too, when two or more "
                                          "retrieved documents have an X.")

    # 4. The unnamed-referent check (one LM call)
    referent_check: bool = Field(False, description="One LM call asks whether the question names what it asks about only by its kind "
                                 "with no earlier turn saying which; flagged, it is asked which.")
    referent_threshold: float | None = Field(
        None, ge=0, le=1, description="Flag at this P(UNDERSPECIFIED) from the check's label log-probabilities; null: the label the LM writes.")

    # 5. The evidence assessment (one LM call)
    key_terms: int = Field(0, ge=0, le=10, description="MAF-RAG's KeyMatch as a check: this many asked-about words in no retrieved "
                           "passage make the question UNANSWERABLE; 0: off (the fitted policy reads the count either way).")
    key_terms_in_turn: bool = Field(False, description="Count only asked-about words the user's turn or its rewrite has.")
    partial_needs_parts: bool = Field(True, description="Take PARTIAL on a question of one part as ANSWERABLE: a partial answer needs "
                                      "a part answered and a part not.")
    one_part_key_terms: bool = Field(False, description="Apply the key-term check to a one-part question's PARTIAL once it is taken as ANSWERABLE.")
    label_unanswerable_below: float | None = Field(
        None, ge=-1, le=1, description="Let an UNANSWERABLE label stand only below this top cosine; at or above it the question is "
        "answered; null: off. Corpus- and embedder-specific.")

    # 6. Asking first: divergence (one LM call) or CLARION's detector
    ambiguity: Literal["off", "detector", "divergence", "both", "either"] = Field(
        "divergence", description="What says a question is ambiguous: CLARION's detector, evidence divergence (passages of different "
        "documents giving different answers), both, or either.")
    follow_up_divergence: bool = Field(False, description="Ask divergence of a follow-up too; off: of a first question only, whose "
                                       "reading no earlier turn has picked.")
    factoid_divergence: bool = Field(True, description="Ask divergence only of a question for a fact, not of a why-, how-to or yes/no "
                                     "question, whose passages explain in different words whatever the reading.")
    multipart_divergence: Literal["always", "same_kind", "never"] = Field(
        "same_kind", description="Divergence on a question of two or more parts: always, only when every part asks for a time or "
        "every part for a quantity, or never.")
    typed_divergence: bool = Field(True, description="Compare the per-passage answers to a question for a time or a quantity by the "
                                   "times or numbers they name.")
    divergence_rarest_word: bool = Field(True, description="Leave out of divergence a passage without the question's rarest word when "
                                         "most candidates have it (needs a lexical index).")
    skip_named: bool = Field(True, description="Skip the divergence call when the question names one assessed document by a title word "
                             "the others lack: it has picked its reading.")
    conversation_names: bool = Field(True, description="Take a document the earlier turns name by such a title word as the reading a "
                                     "follow-up means.")
    answer_all_readings: bool = Field(True, description="answer_all: CLARION's planner writes the readings, each is searched and its "
                                      "writer answers them all (off: divergence's readings are answered passage by passage).")

    # 7. Escalation (MAF-RAG; the rules path only)
    escalation: bool = Field(True, description="When the route is 'I don't know' or partial and unsure, retrieve again with an "
                             "LM-expanded query and assess once more.")
    escalate_below: float = Field(1.0, ge=0, le=1, description="Escalate such a route whose P(answerable) is below this (1.0: every one).")
    escalate_gated: bool = Field(False, description="Escalate a question the retrieval gate turned away too.")
    debate: bool = Field(False, description="MAF-RAG's debate as the last escalation (the `mafrag` section's agents, rounds and "
                         "acceptance); up to (agents + 1) x rounds more LM calls.")

    @field_validator("rewrite_check", mode="before")
    @classmethod
    def _rewrite_check_switch(cls, value: object) -> object:
        """``true``/``false``, as the switch was first written, mean ``questions``/``off``."""
        switch = {True: "questions", False: "off", "true": "questions", "false": "off"}
        return switch.get(value.lower() if isinstance(value, str) else value, value)
