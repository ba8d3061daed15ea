"""A follow-up that changes the subject and names its new thing only by its kind (MTRAG-UN's UNDERSPECIFIED tasks).

Many of MTRAG-UN's UNDERSPECIFIED follow-ups leave the conversation's subject for another that they do not name: "How
did the fast food chain establish a significant presence in the United States?" after turns about Gallipoli, "What
documentation is needed to apply for the loan?" after turns about a web publishing feature. The unnamed-referent cue
(:func:`~askfirst.programs.askfirst.unnamed_referent.unnamed_referents`: a definite determiner before a word no
earlier turn has) finds the unnamed thing, but alone it also marks ANSWERABLE follow-ups that stay on the subject and
speak of a new part of it ("the fees", "the corporation"), so the program uses it alone only before an "I don't know".
A change of subject tells many of them apart: the follow-up's dense embedding is far from every earlier user turn's.
"""

from __future__ import annotations

import numpy as np

from askfirst.programs.askfirst.unnamed_referent import unnamed_referents
from askfirst.programs.common.conversation import user_turns


def topic_similarity(question: str, history: str, embed) -> float | None:
    """The best cosine of ``question`` to an earlier user turn of ``history`` (a ``format_history`` string), with
    ``embed(texts) -> unit vectors``; ``None`` when there is no earlier user turn."""
    earlier = [turn for turn in user_turns(history) if turn.strip()]
    if not earlier:
        return None
    vectors = np.asarray(embed([question, *earlier]))
    return float(np.max(vectors[1:] @ vectors[0]))


def switched_referents(question: str, history: str, said_before: str, embed, *, below: float) -> dict:
    """The check's record ``{"words", "similarity", "switched"}``: the unnamed-referent cue's words for the follow-up
    ``question``, its best cosine to an earlier user turn (computed only when the cue has words: no embedding otherwise),
    and whether both hold - words, and a similarity below ``below``. ``said_before`` is the earlier turns' text
    (``history_text``), as the cue reads it."""
    words = unnamed_referents(question, said_before)
    similarity = topic_similarity(question, history, embed) if words else None
    return {"words": words, "similarity": similarity, "switched": similarity is not None and similarity < below}
