"""The askfirst program's config section (``askfirst``): which stages run, and how it decides to ask first."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from askfirst.config import ConfigSection


class AskfirstConfig(ConfigSection):
    """The composed program (program.kind=askfirst). Every stage is a switch, so an ablation is a config change;
    the notes loop, re-ranker, classifier and responders it composes keep their ``program`` settings."""

    policy: Literal["rules", "fitted"] = Field(
        "rules", description="Who decides the route: 'rules', the hand-set chain of checks; 'fitted', every stage records its signal "
        "and the compiled program's route policy decides (the rules over the same signals until one is fitted).")
    standalone: bool = Field(True, description="Rewrite a follow-up question into a self-contained one before retrieval (off: search the last turn).")
    rewrite_check: Literal["off", "questions", "every_turn"] = Field(
        "questions", description="Search with the user's turn instead of a rewrite that is not a question: 'questions' refuses a "
        "rewrite with no '?' of a turn that ends with '?' (the 0.5B rewriter sometimes copies or writes an answer); 'every_turn' "
        "refuses one whatever the turn. Not every_turn by measurement: the 0.5B's statement rewrites of statement turns were all "
        "answers, yet searching those turns as written lost one route on each MTRAG-UN half (bench/RESULTS.md). true/false "
        "mean questions/off.")
    rewrite_repeat_check: bool = Field(
        True, description="Search with the user's turn instead of a rewrite that is an earlier user turn word for word (the 0.5B "
        "rewriter sometimes returns the question asked before instead of this one: 8 of 265 MTRAG-UN dev tasks, on which it gained "
        "one route net, with no CI separating it; bench/RESULTS.md), or a compiled rewrite's demonstration's output word for word "
        "(the demo's t04 with askfirst:mtrag-rewrite-demos).")
    rewrite_new_words_above: float | None = Field(
        None, ge=0, le=1, description="Search with the user's turn instead of a rewrite more than this share of whose content words "
        "(and three or more) no turn of the conversation has (null: off). The 0.5B translated 'Is it available in Spanish?' into "
        "Spanish (share 1.0), and answered 'best facilites in the USA for cancer treatment.' (0.76) and 'Tell me about the "
        "importance of this tricolor national flag.' (0.69); no other rewrite MTRAG-UN dev kept passed 0.45. Off by "
        "measurement: at 0.5 the Spanish turn, searched as written, found a page to answer from and lost its right 'I don't "
        "know' (validation half -0.008 [-0.038, 0.000]); the training half's routes did not move (bench/RESULTS.md).")
    follow_up_search: Literal["turn", "with_previous_turn"] = Field(
        "turn", description="What a follow-up searched as the user wrote it (its rewrite refused, the same as the turn, or not "
        "made) is searched with: 'turn' alone, or 'with_previous_turn', which also searches the user's previous turn followed by "
        "this one (fused by RRF) and gates on that query's top cosine ('When did it take place?' names nothing to find). The LM "
        "steps read the turn and the conversation either way; the complex stage's loop reads the conversation itself. "
        "with_previous_turn ranks better on every MTRAG set measured (validation half Recall@10 +0.033 [+0.004, +0.084], nDCG@5 "
        "+0.045 [+0.014, +0.092]) but is not the default: on the validation half it cost routes (-0.030 [-0.083, +0.015]), "
        "'I don't know' on UNANSWERABLE tasks 10 -> 7 of 21 (bench/RESULTS.md).")
    complexity_router: Literal["lm", "simple", "complex"] = Field(
        "lm", description="R2RAG's router: simple -> one retrieval round, complex -> the query-generator <-> notes-builder loop; or force one.")
    ambiguity: Literal["off", "detector", "divergence", "both", "either"] = Field(
        "divergence", description="When to ask first: CLARION's detector (grounded in the top passages) says ambiguous, the evidence "
        "diverges (two or more passages from different documents give different answers), both, or either. Divergence is the default: "
        "the offline 1.5B detector called every demo question ambiguous (measured on a01-a04).")
    faq: bool = Field(
        False, description="Also search URASys's FAQ collection of the corpus and fuse it into the ranking with RRF, by document (an "
        "entry votes for its document's best-ranked passage). `askfirst index --augment` builds it with the `urasys` section's "
        "indexing settings (LM calls per chunk of the corpus); eval and ask build or update it too while this is on.")
    faq_k: int = Field(10, ge=1, le=100, description="FAQ entries searched per query when `faq` is on.")
    referent_check: bool = Field(
        False, description="Ask first when the question names what it asks about only by its kind ('the fee', 'the actor') and the "
        "conversation does not say which (MTRAG-UN's UNDERSPECIFIED tasks): one call on the answer LM before the assessment; a "
        "flagged question gets the clarification responder, which names the readings the evidence holds.")
    referent_threshold: float | None = Field(
        None, ge=0, le=1, description="Flag a question when P(UNDERSPECIFIED) from the check's label log-probabilities reaches this; "
        "null: follow the label the LM writes (also the fallback where the LM gives no log-probabilities). `askfirst "
        "tune-threshold --signal referent` sets it on a training half.")
    referent_cue: bool = Field(
        True, description="Ask rather than say 'I don't know' when a follow-up puts a definite determiner before a word no earlier "
        "turn has ('the loan', 'the animal'): the user may mean one the collection has (MTRAG-UN's UNDERSPECIFIED tasks). Lexical, "
        "no LM call; a first question's 'the X' is left to first_turn_cue_words.")
    first_turn_cue_words: int = Field(
        3, ge=0, description="The referent cue on a question with no earlier turn (with referent_cue on): ask rather than say 'I don't "
        "know' when it names nothing but one 'the X' - no name, no number, at most this many content words ('When did the "
        "investigation begin?', 'How much is the fee?'). 0: follow-ups only. Measured on URASys's SQuAD2 ambiguous questions, 9 -> 10 "
        "of 20 clarified (bench/RESULTS.md); it marks none of the demo's or MTRAG-UN dev's first turns but UNDERSPECIFIED ones.")
    first_turn_cue_answered: bool = Field(
        True, description="The first-turn referent cue on an answered question for a fact too: ask rather than answer when two "
        "or more retrieved documents have an X, since answering from one is a guess at which the user means ('When was the union "
        "created?'). False: only a question headed for 'I don't know' is asked about.")
    dangling_reference: bool = Field(
        True, description="Ask first when a question with no earlier turn points at something it never names: a third-person "
        "pronoun with nothing before it to stand for ('When did he return to work?') or a demonstrative ('this state library'). "
        "Lexical, no LM call, before the collection check and the assessment; the reply asks who or what the words mean ('Who do "
        "you mean by \"he\"?'), then the clarification responder names the readings the evidence holds. A follow-up's pronouns "
        "point back to earlier turns, so it is left to the other stages (and dangling_follow_up).")
    dangling_follow_up: bool = Field(
        True, description="Ask first, as dangling_reference does, when the first lower-case word of a follow-up's demonstrative "
        "phrase is new to the earlier turns the program reads ('this tricolor national flag' after turns about Medicare): it points at a thing the "
        "conversation never named. Lexical, no LM call, before the collection check and the assessment. On MTRAG-UN dev's "
        "training half it marks 4 of 16 UNDERSPECIFIED follow-ups, 1 of 4 PARTIAL and none of 103 ANSWERABLE or UNANSWERABLE "
        "(bench/dangling_references.py --follow-ups).")
    topic_switch_below: float | None = Field(
        0.125, ge=-1, le=1, description="Ask first when a follow-up changes the subject and names its new thing only by its kind: the "
        "referent cue's words ('the loan' after turns about web publishing) and a best dense cosine to every earlier user turn below "
        "this. No LM call (one embedding), before the collection check and the assessment; not past the retrieval gate. Set "
        "between the cosines of the highest UNDERSPECIFIED follow-up it marks on MTRAG-UN dev's training half (0.114; 7 of 22 "
        "marked, nothing else) and of the lowest other one there or in the demo (0.137, the demo's 'the essay' of an award; "
        "bench/unnamed_referent_cue.py --topic-switch). The value is the embedder's (MiniLM's here); null: off.")
    skip_named: bool = Field(True, description="Skip divergence's per-passage answers call (an LM call) when the question names one "
                             "of the assessed documents by a title word none of the others' titles has: such a question has "
                             "picked its reading, and divergence among documents it names would be discarded anyway. Off: always "
                             "call, and apply that guard to the diverging documents only.")
    conversation_names: bool = Field(True, description="Take a document the conversation's earlier turns name (by a title word "
                                     "none of the other assessed documents' titles has) as the reading a follow-up means, as skip_named "
                                     "does for the question: no divergence call, no clarifying question. On the demo's t03 the 0.5B "
                                     "rewrite dropped the award the first turn named, and divergence asked which scholarship. It "
                                     "matters only with follow_up_divergence on: off, no follow-up is asked divergence.")
    follow_up_divergence: bool = Field(False, description="Ask divergence of a follow-up too (a turn with earlier turns); off: of a "
                                       "first question only, since a conversation's earlier turns have picked what it is about and a "
                                       "follow-up that leaves its thing unsaid is the referent checks' (dangling_follow_up, referent_cue). "
                                       "Off by measurement: on MTRAG-UN dev and MTRAG's synthetic sample, divergence's clarifications of "
                                       "follow-ups were right on 1 of 11, no more often than UNDERSPECIFIED tasks come among follow-ups, "
                                       "while on first questions it asks about the demo's, SQuAD2-ambiguous and ASQA's readings "
                                       "(bench/RESULTS.md).")
    factoid_divergence: bool = Field(True, description="Ask divergence only of a question that asks for a fact: not a why-question "
                                     "(also 'What was the reason for …', 'What is the significance of …'), "
                                     "a how-to ('How do I …') or a yes/no question ('Can I …'), whose passages answer in explanations "
                                     "that differ in wording whatever the reading (no LM call for those). On 40 MTRAG-UN training-half "
                                     "tasks divergence asked about 4 ANSWERABLE tasks and no other; 3 were such questions.")
    multipart_divergence: Literal["always", "same_kind", "never"] = Field(
        "same_kind", description="Divergence on a question of two or more parts (cut as the collection check cuts it: 'What is X, and "
        "how much does Y cost?'): 'always' asks it; 'same_kind' only when every part asks for a time or every part for a quantity "
        "(as typed_divergence reads them: 'When did the season premiere and when did it end?'), since parts that ask for different "
        "things get different answers from different passages whatever the reading; 'never' skips it. always -> same_kind: MTRAG's "
        "synthetic sample with 40 ANSWERABLE tasks, route accuracy 31 -> 33 of 77 (clarify on ANSWERABLE 7 -> 5 of 40); MTRAG-UN "
        "dev's multi-part tasks, training half 14 -> 15 of 18 (never: 14, losing an UNDERSPECIFIED 'when … and when …'), "
        "validation half 10 -> 10 of 15 (bench/RESULTS.md).")
    typed_divergence: bool = Field(True, description="Compare the per-passage answers to a question for a time ('By when …') or a "
                                   "quantity ('How much …') by the times or numbers they name, leaving out one that names none: on the "
                                   "demo's 'By when do I have to apply for one of them?' two housing pages said '30 June' in different "
                                   "words and two other pages answered other questions, and divergence asked which page was meant.")
    divergence_rarest_word: bool = Field(True, description="Leave out of divergence a passage without the question's rarest word (the "
                                         "content word the fewest passages of the collection have, by the BM25 index) when most "
                                         "candidate passages have it: it answers another question (company shares beside three 'God "
                                         "bless you' for responses to sneezes, on MTRAG's synthetic sample). With any one passage having "
                                         "it enough, 6 of 12 clarifications on 20 SQuAD2-ambiguous questions were lost (bench/RESULTS.md). "
                                         "Needs a lexical index (retriever.mode not dense).")
    divergence_passages: int = Field(4, ge=2, le=8, description="Documents the evidence assessment reads (the evidence, then the next passages "
                                     "of the ranking from other documents), each answering the question on its own: the input of divergence.")
    key_terms: int = Field(0, ge=0, le=10, description="The key-term check (MAF-RAG's KeyMatch as a check): a question with at least this "
                           "many words of what it asks about in no retrieved passage is UNANSWERABLE; 0 (the default) turns the check off. "
                           "Off by measurement since the collection check (absent_terms) gives the demo's 'I don't know' answers before it: "
                           "off, the demo's routes are the same, MTRAG-UN's training half +0.025 (two more ANSWERABLE tasks answered, one "
                           "UNDERSPECIFIED one no longer asked about), its validation half +0.025 and 20 SQuAD2-ambiguous questions "
                           "+0.100 (bench/RESULTS.md). Two where it is on: the offline 1.5B often names the whole question as what is asked "
                           "about, and one generic verb of it ('stay', 'finish') can be missing from an answering passage (the demo's a07, m01).")
    key_terms_in_turn: bool = Field(False, description="Count only the asked-about words the user's turn or its standalone "
                                    "rewrite has: the offline 1.5B often names an earlier turn's question as what is asked about "
                                    "(on MTRAG-UN dev, 9 of the key-term check's 10 overrulings rested on such words alone). Off by "
                                    "measurement: on the training half it moved 7 routes and kept route accuracy (0.600), moving "
                                    "'I don't know' and clarifying questions to answers; on the validation half 0.675 -> 0.625.")
    absent_terms: int = Field(2, ge=0, le=10, description="The collection check on the user's own words: a part of the question "
                              "(cut at sentence ends and at 'and' before a question word) with at least this many content words that "
                              "no retrieved passage has (by stem) and the collection's BM25 index lacks is not covered. No part covered: "
                              "UNANSWERABLE with no LM call; some: PARTIAL. 0 turns it off. Two, as for key_terms: one generic "
                              "word ('skip', 'want') can be missing from a collection that answers the question (the demo's m01, m04).")
    partial_needs_parts: bool = Field(True, description="Take the assessment's PARTIAL on a question of one part (cut as the "
                                      "collection check cuts it) as ANSWERABLE: a partial answer needs a part answered and a part "
                                      "not. On 40 MTRAG-UN dev training-half tasks the 1.5B labelled 7 one-part questions PARTIAL: "
                                      "3 ANSWERABLE, 2 UNDERSPECIFIED, 1 UNANSWERABLE, 1 PARTIAL.")
    one_part_key_terms: bool = Field(False, description="Apply the key-term check to a one-part question's PARTIAL once it is taken "
                                     "as ANSWERABLE (partial_needs_parts); off: it keeps PARTIAL's exemption. Off by measurement: on "
                                     "MTRAG-UN's training half (22 tasks) it sent 2 ANSWERABLE tasks to 'I don't know' and righted "
                                     "none (route accuracy 0.636 -> 0.545); on the validation half it moved one task each way (bench/RESULTS.md).")
    mode: Literal["ask_first", "answer_all"] = Field("ask_first", description="ask_first: an ambiguous question gets a clarifying "
                                                     "question naming the readings; answer_all: nothing is asked, and every reading is answered (answer_all_readings; ASQA-style "
                                                     "benchmarks).")
    answer_all_readings: bool = Field(True, description="answer_all's answer to an answered question: CLARION's planner writes "
                                      "its readings on the evidence, each is searched (no LM call) and CLARION's writer answers them "
                                      "all in one long answer (two LM calls where the complete-answer responder made one; divergence and the "
                                      "detector are not asked, as every reading is answered). Off: the "
                                      "readings divergence named are answered passage by passage, and the rest by the responder. ASQA "
                                      "dev STR-EM, off -> on: the first 30 questions, where it was designed, 0.172 -> 0.267; two seeded "
                                      "samples of 30, 0.342 -> 0.381 and 0.216 -> 0.327; +0.080 [+0.029, +0.136] on the 82 distinct "
                                      "questions. CLARION scored 0.250 and 0.361 on the first two at about twice the LM calls (bench/RESULTS.md).")
    min_top_cosine: float | None = Field(
        None, ge=-1, le=1, description="The retrieval gate (MAF-RAG's VOR confidence, the top dense cosine of the searched query): below "
        "it the question is UNANSWERABLE without the assessment call (escalation retrieves again only with escalate_gated). null: off. The value is "
        "corpus- and embedder-specific: `askfirst tune-threshold --signal top-cosine` sets it on a training half.")
    label_unanswerable_below: float | None = Field(
        None, ge=-1, le=1, description="Let the evidence assessment's UNANSWERABLE stand only on a question whose retrieval-gate "
        "signal (the top dense cosine of the searched query, on escalation's second assessment too) is below this; at or above it the question is taken as ANSWERABLE "
        "(recorded as `unanswerable_overruled`), since the collection holds something close to it. null: off. Chosen on "
        "MTRAG-UN's training half, where the 1.5B's UNANSWERABLE was right on 4 tasks, all below 0.50, and wrong on 6 "
        "ANSWERABLE ones, three above 0.59; bench/askfirst_mtrag.yaml sets it, which took 'I don't know' on ANSWERABLE tasks "
        "13 -> 10 of 87 and 13 -> 8 of 79 on the two halves and kept the UNANSWERABLE ones' (bench/RESULTS.md). Like "
        "min_top_cosine the value is the corpus's and embedder's; "
        "with answer_threshold set, the overruled label's P(answerable) still decides its route.")
    escalation: bool = Field(True, description="MAF-RAG's escalation: when the classifier is unsure, retrieve again with an expanded query and classify once more.")
    escalate_gated: bool = Field(
        False, description="Escalate a question the retrieval gate (min_top_cosine) turned away too: the expanded query's top cosine "
        "may pass the gate and the second assessment answer it. Off, the gate's 'I don't know' stands, as `tune-threshold --signal "
        "top-cosine` measured it (on the searched query alone). Off by measurement: on the MTRAG-UN tasks the gate turns away, "
        "one route more right on each half (two UNANSWERABLE tasks gained, one ANSWERABLE lost) and half the LM calls (bench/RESULTS.md).")
    debate: bool = Field(False, description="MAF-RAG's debate as the last escalation: an 'I don't know' or partial route still unsure after "
                         "escalation (P(answerable) below escalate_below) is debated by agents on the top evidence passages (the `mafrag` "
                         "section's debate_agents, debate_rounds, debate_accept); an accepted aggregate is the answer. Off by default: "
                         "up to (agents + 1) x rounds more LM calls per such question.")
    escalate_below: float = Field(
        1.0, ge=0, le=1, description="Escalate an 'I don't know' or partial route whose P(answerable) is below this. 1.0: every "
        "such route (one more route right on each MTRAG-UN dev half than 0.6, for 0.05 LM calls a question; bench/RESULTS.md).")

    @field_validator("rewrite_check", mode="before")
    @classmethod
    def _rewrite_check_switch(cls, value: object) -> object:
        """``true``/``false``, as the switch was first written, mean ``questions``/``off``."""
        switch = {True: "questions", False: "off", "true": "questions", "false": "off"}
        return switch.get(value.lower() if isinstance(value, str) else value, value)
