"""A lexical cue for a follow-up that names what it asks about only by its kind (MTRAG-UN's UNDERSPECIFIED tasks).

Most of MTRAG-UN's UNDERSPECIFIED tasks refer to one thing by its kind - "the loan", "the animal", "this state
library" - with no earlier turn saying which. The cue: a definite determiner (the, this, that, these, those) before a
lower-case word (a proper noun names its thing) whose stem no earlier turn has. The offline 1.5B could not tell these
apart itself (the LM check ``askfirst.referent_check``: AUC 0.47 on the training half), and the cue alone also marks
one ANSWERABLE follow-up in ten ("the toolchain"), so the program uses it only to choose between "I don't know" and a
clarifying question once it has found no answer (``askfirst.referent_cue``). ``bench/unnamed_referent_cue.py``
measures it per class on each half of MTRAG-UN dev.
"""

from __future__ import annotations

import re

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
