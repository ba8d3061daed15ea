"""What a question's form says it asks for: a fact (divergence can tell its readings apart) or not.

Divergence compares the short answers each passage alone gives. That reads readings off a question asking for a fact
("How much is the fee?": EUR 85 here, EUR 40 there). A why-question, a how-to question or a yes/no question gets an
explanation, a procedure or a "yes, if …" from each passage, and those differ in wording whatever the reading: on 40
MTRAG-UN training-half tasks divergence asked about "Why was the Berlin wall built?", "Why do gas stations charge
different amounts …?" and "… Can I file my tax return online?", all ANSWERABLE.
"""

from __future__ import annotations

import re

AUXILIARIES = frozenset(
    "is are was were am be do does did can could should would will shall may might must has have had isn't aren't wasn't "
    "weren't don't doesn't didn't can't couldn't shouldn't wouldn't won't hasn't haven't".split())
_FACT_WORDS = frozenset("what which who whom whose when where".split())
_CONJUNCTIONS = frozenset("and or but so then also".split())
# "What is the reason for …", "What was the significance of …": a why-question in the form of a fact question. ("The
# meaning of …" and "the role of …" are left out: a word's meaning is a fact, and AmbigNQ asks it with two readings.)
_WHY_AS_WHAT = re.compile(r"what (?:is|was|are|were) (?:the )?(?:\w+ )?(?:reasons?|purposes?|significance|importance|impacts?|effects?|"
                          r"benefits?|advantages?|disadvantages?|consequences?|implications?) (?:of|for|behind)\b")
_SENTENCE = re.compile(r"[^.?!]+[.?!]*")
_WORD = re.compile(r"[a-z']+")


def _sentences(question: str) -> list[list[str]]:
    """``question``'s sentences, each cut into its clauses at the commas."""
    return [sentence.strip().split(",") for sentence in _SENTENCE.findall(question) if sentence.strip()]


def _clause_words(clause: str) -> list[str]:
    """The clause's words, lower-cased, past any leading "and" / "or" / "but" (", and how much is the rent?")."""
    words = _WORD.findall(clause.lower())
    while words and words[0] in _CONJUNCTIONS:
        words = words[1:]
    return words


def _clause_form(clause: str) -> str | None:
    """``fact``, ``why``, ``how-to`` or ``yes/no`` from the clause's first words, or ``None`` when they say nothing."""
    words = _clause_words(clause)
    if not words:
        return None
    first, second = words[0], words[1] if len(words) > 1 else ""
    if first == "why" or _WHY_AS_WHAT.match(" ".join(words)):
        return "why"
    if first in _FACT_WORDS:
        return "fact"
    if first == "how":  # "how much / many / long": a quantity; "how do / can / to": a procedure
        return "how-to" if second in AUXILIARIES or second == "to" else "fact"
    if first in AUXILIARIES:
        return "yes/no"
    return None


def question_form(question: str) -> str:
    """``fact`` unless every question sentence of ``question`` (the sentences ending in "?", else all) is a why-, how-to
    ("How do I …", "How to …") or yes/no question ("Can I …", "Is …"); then the first sentence's form.

    A sentence's clauses (its start, and after each comma, past a leading "and" / "or" / "but") are read by their
    first word: one that asks for a fact, or none that says anything, makes the sentence ask for a fact. So "Anyway,
    can I file online?" is a yes/no question, while "In 2015, who scored most?" and "Can I skip the meal plan, and how
    much is the rent?" ask for a fact; so do a fragment and an imperative ("the lab fee?", "Tell me about the fees.").
    "What was the reason for …" and "What is the significance of …" are why-questions: on MTRAG's synthetic tasks
    divergence asked which document was meant of both, their passages each explaining in other words.
    """
    sentences = _sentences(question)
    forms = []
    for sentence in [s for s in sentences if s[-1].endswith("?")] or sentences:
        clauses = [f for clause in sentence if (f := _clause_form(clause)) is not None]
        if not clauses or "fact" in clauses:
            return "fact"
        forms.append(clauses[0])
    return forms[0] if forms else "fact"


# A clause that opens with one of these asks for a time or a quantity ("By when …", "In what year …", "How many …").
_TIME = re.compile(r"(?:(?:by|since|until|till|from|in|on|at)\s+)?(?:when|what\s+(?:date|year|day|month|time))\b")
_QUANTITY = re.compile(r"how\s+(?:much|many)\b")


def answer_type(question: str) -> str | None:
    """``time`` or ``quantity`` when every clause of ``question`` that opens with a question word asks for that kind of
    answer (as :func:`question_form` cuts them), else ``None``. Divergence then compares the times or numbers the
    passages give, not their wording: "By when do I have to apply?" got "The 30 June deadline is the time by which …"
    from one housing page and "… through the Housing Portal by 30 June." from another, which agree."""
    kinds = set()
    for sentence in _sentences(question):
        for clause in sentence:
            words = " ".join(_clause_words(clause))
            if _TIME.match(words):
                kinds.add("time")
            elif _QUANTITY.match(words):
                kinds.add("quantity")
            elif _clause_form(clause) is not None:
                kinds.add(None)  # a clause asking for something else
    return kinds.pop() if len(kinds) == 1 else None
