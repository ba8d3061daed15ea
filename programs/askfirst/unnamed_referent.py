"""A lexical cue for a follow-up that names what it asks about only by its kind (MTRAG-UN's UNDERSPECIFIED tasks).

Most of MTRAG-UN's UNDERSPECIFIED tasks refer to one thing by its kind - "the loan", "the animal", "this state
library" - with no earlier turn saying which. The cue: a definite determiner (the, this, that, these, those) before a
lower-case word (a proper noun names its thing) whose stem no earlier turn has. The offline 1.5B could not tell these
apart itself (the LM check ``askfirst.referent_check``: AUC 0.48 on the training half), and the cue alone also marks
one ANSWERABLE follow-up in ten ("the toolchain"), so the program uses it only to choose between "I don't know" and a
clarifying question once it has found no answer (``askfirst.referent_cue``).

A first question has no earlier turn to point back to, so there "the X" mostly names X; but a pronoun with nothing
before it to stand for ("When did he return to work?") or a demonstrative ("What services does this state library
offer?") still points at something the question never names (:func:`dangling_references`), and so does "the X" in a
question that names nothing else ("When did the investigation begin?", :func:`bare_referents`). In a follow-up a
demonstrative points back, unless its words are new to the conversation ("this tricolor national flag" after turns about
Medicare, :func:`unseen_demonstratives`).
"""

from __future__ import annotations

import itertools
import re

from askfirst.programs.askfirst.absent_terms import content_words, function_words
from askfirst.programs.askfirst.key_terms import stem
from askfirst.retrieval.bm25 import STOPWORDS, tokenize

_DEFINITE = re.compile(r"\b(this|that|these|those|the)\s+((?:[a-z][a-z\-]*\s+){0,2}?)([a-z][a-z\-]+)(?:'s)?\b", re.IGNORECASE)
# Words that follow "the" without naming a thing of the conversation ("the same", "the following", "the way").
_GENERAL = frozenset("same other following first last only best most way one ones time case thing things question above below information".split())


def unnamed_referents(question: str, earlier: str) -> list[str]:
    """The words ``question`` puts after a definite determiner whose stem ``earlier`` (the conversation's earlier turns)
    does not have, in order; empty when there are no earlier turns (a first question's "the X" names X, and whether
    the collection has it is the assessment's business)."""
    if not earlier.strip():
        return []
    seen = {stem(t) for t in tokenize(earlier)}
    found = []
    for match in _DEFINITE.finditer(question):
        head = match.group(3)
        # A stopword is no thing's name, and no earlier turn's tokens could hold it ("this and the bridge").
        if head[0].isupper() or head.lower() in _GENERAL or head.lower() in STOPWORDS:
            continue
        if stem(head.lower()) not in seen:
            found.append(head)
    return found


def bare_referents(question: str, *, max_words: int) -> list[str]:
    """For a question with no earlier turn: the word after its one "the" when that is all it says of what it asks about
    - no name (a capitalised word after the first), no number, a single "the" before a word that names a thing, and at
    most ``max_words`` content words in all ("When did the investigation begin?", "How much is the fee?"); else empty.
    Such a question asks about one X of the many there are, and a search cannot tell which. The program asks only when
    the retrieved passages have an X (``key_terms.documents_with``) yet the assessment found no answer: the user may mean
    that one, or another; with no X in them, "I don't know" stands. With ``askfirst.first_turn_cue_answered`` it asks
    of an answered one too when two or more retrieved documents have an X: the answer is from one of them.
    """
    if max_words < 1 or re.search(r"\d", question):
        return []
    words = _WORD.findall(question)
    if any(w[0].isupper() and w != "I" for w in words[1:]) or len(content_words(question)) > max_words:
        return []
    heads = [m.group(3) for m in _DEFINITE.finditer(question) if m.group(1).lower() == "the"]
    if len(heads) != 1 or heads[0].lower() in _GENERAL or heads[0].lower() in function_words():
        return []
    return heads


_PRONOUN = re.compile(r"(?<![\w-])(he|him|his|she|her|hers|they|them|their|theirs|it|its)(?![\w-])", re.IGNORECASE)  # not "he-man"
_PLURAL_PRONOUNS = frozenset({"they", "them", "their", "theirs"})
_NEUTER_PRONOUNS = frozenset({"it", "its"})
# "it" that stands for nothing: "How long does it take?", "Is it true that ...?", "it is possible", "Where does it
# rain most?", "Who made it to the final?".
_DUMMY_IT = re.compile(r"\b(?:is|was|does|did|will|would|can|could)\s+it\s+(?:take|takes|cost|mean|matter|possible|true|"
                       r"necessary|important|called|known|better|best|safe|legal|required|easy|hard|difficult|rain|snow)\b"
                       r"|\bit\s+(?:is|was)\s+(?:possible|true|necessary|important|required|known|said|believed|estimated)\b"
                       r"|\b(?:make|makes|made|making)\s+it\b", re.IGNORECASE)
# "that" is a demonstrative after a preposition ("at that time", "during that period"); elsewhere mostly a relative
# pronoun ("the book that ...") or a conjunction ("said that ...").
_DEMONSTRATIVE = re.compile(r"\b(?:(?P<prep>at|in|on|by|for|from|during|of|to|with|since|until|after|before)\s+)?"
                            r"\b(?P<det>this|these|those|that)\s+(?P<head>[a-z][a-z\-]+)(?P<rest>(?:\s+[a-z][a-z\-]+){0,2})", re.IGNORECASE)
_WORD = re.compile(r"[^\W\d_][\w'\-]*")
_COPULA = re.compile(r"\b(?:is|are|was|were)(?:n't)?\s*$", re.IGNORECASE)


def dangling_references(question: str) -> list[str]:
    """What a question asked with no earlier turn points at without naming it, in order: a third-person pronoun with
    nothing before it that it could stand for (no name before it; for they / them / their no plural noun either:
    "Do students pay a fee when they withdraw?" is complete; for it / its no content word at all, and not a dummy "it":
    "How long does it take?"), or a demonstrative before a word ("this animal", "these
    clinics"; "that" only after a preposition, "at that time": elsewhere it is mostly a relative pronoun). A name is
    a capitalised word other than "I" and a question's capitalised first function word ("Did", "Which").
    """
    words = function_words()
    found = []
    for match in _PRONOUN.finditer(question):
        before = _WORD.findall(question[: match.start()])
        named = any(w[0].isupper() and w != "I" and not (i == 0 and w.lower() in words) for i, w in enumerate(before))
        plural = match.group(1).lower() in _PLURAL_PRONOUNS and any(  # a plural possessive too: "the twelve spies' mission"
            len(w) > 3 and w.lower().rstrip("'").endswith("s") and w.lower() not in words for w in before)
        # "it" may stand for any thing named before it ("How does the engine start when it is cold?"), or for nothing
        it_resolved = match.group(1).lower() in _NEUTER_PRONOUNS and (
            any(w.lower() not in words for w in before[1:]) or _DUMMY_IT.search(question) is not None)
        if not named and not plural and not it_resolved:
            found.append(match.group(0))
    return found + [" ".join(phrase) for phrase in _demonstratives(question)]


def _demonstratives(question: str, *, skip_predicates: bool = False) -> list[list[str]]:
    """``question``'s demonstrative phrases as words, determiner first: "this", "these" or "those" (or "that" after a
    preposition: elsewhere it is mostly a relative pronoun or a conjunction) before a word that names a thing, running on
    to the next function word, at most three words ("this state library", "this animal"; with no part-of-speech tagger,
    "these clinics open"). With ``skip_predicates``, a lone word after "is" / "are" is not one: there it is mostly what
    a pronoun "this" is said to be ("Is this different from text to speech?", "Is this intended for professionals?" on
    MTRAG-UN dev), which in a first question is itself dangling, but in a follow-up points back."""
    words = function_words()
    phrases = []
    for match in _DEMONSTRATIVE.finditer(question):
        if match["det"].lower() == "that" and not match["prep"]:
            continue
        if match["head"].lower() not in words:
            rest = list(itertools.takewhile(lambda w: w.lower() not in words, match["rest"].split()))
            if skip_predicates and not rest and _COPULA.search(question[: match.start()]):
                continue
            # It points back at what the question said before it: "… the alternative investments available? What is
            # the rate of return for these alternative investments?" (MTRAG's synthetic tasks).
            if stem(match["head"].lower()) in {stem(t) for t in tokenize(question[: match.start()])}:
                continue
            phrases.append([match["det"], match["head"], *rest])
    return phrases


# "this kind of loan" names its thing after "of"; "in this case", "this time" name none.
_NAMES_NOTHING = _GENERAL | frozenset("kind kinds type types sort sorts".split())


def unseen_demonstratives(question: str, earlier: str) -> list[str]:
    """A follow-up's demonstrative phrases (as :func:`dangling_references` finds them) whose first lower-case word has a
    stem ``earlier`` (the conversation's earlier turns) does not have: "this tricolor national flag" after turns about
    Medicare, "this particular index fund" after turns about index funds in general. Such a phrase points at one thing
    no turn has named, as a first question's "this animal" does. A capitalised word is a name, which says which."""
    if not earlier.strip():
        return []
    seen = {stem(t) for t in tokenize(earlier)}
    found = []
    for phrase in _demonstratives(question, skip_predicates=True):
        # Its first lower-case word, past any name: the words after it may be a verb and its object, as in "Does this
        # Medicare cover dental care?", which no part-of-speech tagger cuts off here.
        word = next((w.lower() for w in phrase[1:] if w[0].islower()), None)
        if word is not None and word not in _NAMES_NOTHING and stem(word) not in seen:
            found.append(" ".join(phrase))
    return found


def dangling_question(words: list[str], question: str = "") -> str:
    """The question that opens a clarification of a dangling reference, on the first of ``words`` (from
    :func:`dangling_references`): who a pronoun stands for ('Who do you mean by "his"?'), or what a demonstrative's
    phrase points at ('What do you mean by "these languages"?'); empty when there are none.

    A phrase that starts with a name and is the subject of ``question``'s opening auxiliary ends with the name: the word
    after it is the verb ('"this Superior Court"', not "this Superior Court publish", of "Does this Superior Court publish
    judges roster?" on MTRAG-UN dev). Elsewhere a name is as often a modifier ("in this TV series")."""
    if not words:
        return ""
    first = words[0]
    if not _PRONOUN.fullmatch(first):
        return f'What do you mean by "{_quoted_phrase(first, question)}"?'
    who = "Who or what" if first.lower() in _PLURAL_PRONOUNS else "What" if first.lower() in _NEUTER_PRONOUNS else "Who"
    return f'{who} do you mean by "{first}"?'


def dangling_kind(words: list[str], question: str = "") -> str | None:
    """The word that names the kind of thing the first demonstrative phrase of ``words`` points at: the last word of the
    phrase :func:`dangling_question` quotes ("flag" of "this tricolor national flag"), lower-cased; ``None`` for a
    pronoun, which names no kind, or for no words."""
    if not words or _PRONOUN.fullmatch(words[0]):
        return None
    return _quoted_phrase(words[0], question).split()[-1].lower()


def _quoted_phrase(phrase: str, question: str) -> str:
    """A demonstrative ``phrase`` as a clarification quotes it: cut after its name when the name is the subject of
    ``question``'s opening auxiliary (see :func:`dangling_question`)."""
    det, *rest = phrase.split()
    if _AUXILIARY_BEFORE.search(question[: max(question.find(phrase), 0)]):
        rest = list(itertools.takewhile(lambda w: w[:1].isupper(), rest)) or rest
    return " ".join([det, *rest])


# The auxiliary that opens a yes/no question, just before its subject: "Does this Medicare cover dental care?"
_AUXILIARY_BEFORE = re.compile(r"^\W*(?:do|does|did|can|could|will|would|should|may|might|must)\s+$", re.IGNORECASE)


def referent_question(words: list[str]) -> str:
    """The question that opens a clarification of the first-turn referent cue, on the first of ``words`` (from
    :func:`bare_referents`): "Which investigation do you mean?"; empty when there are none."""
    return f"Which {words[0]} do you mean?" if words else ""
