"""The standalone rewrite as a search query, refused when the rewriter answered instead of rewriting.

The offline 0.5B rewriter sometimes writes an answer where a question belongs: "Is Sweden politically neutral?" came
back as "Sweden is not politically neutral. It is a country with …" (MTRAG-UN dev), and the demo's "And what do
part-time students pay?" as "Part-time students pay EUR 4,200 per semester [fees-tuition-part-time]", copied from the
earlier answer. Searching with that finds what the rewriter believed, not what the user asked.

It also copies earlier answers' citation tags into a rewrite that is a question: the demo's "By when do I have to apply
for one of them?", after an answer citing [housing-residence-halls], came back as itself with the tag appended (AVX2
machine, 2026-11-29). A tag is no word the user said, so :func:`without_copied_tags` takes it out.

And it sometimes returns an earlier user turn, word for word, instead of the last one: "Who charges the fee for issuing a
Writ of Execution in this case?" came back as the turn before it, "According to you it is applicable in which states?"
(MTRAG-UN dev, AVX2 machine). That is the question the user asked before, already answered; :func:`repeats_earlier_turn`
tells the program to search the turn as written instead. With demonstrations from a compile it may return one of
theirs: the demo's "Is there a fee for each guest night?" came back as a shipped demo's rewrite about the Roman Empire
and Italy, word for word (``askfirst:mtrag-rewrite-demos``); :func:`copies_one_of` the demos' rewrites tells it the same.

And it sometimes writes words that no turn has: "Is it available in Spanish?" came back in Spanish, "¿Está disponible en
español?", and "best facilites in the USA for cancer treatment." as an answer listing hospitals, clinics and research
institutions (MTRAG-UN dev). With ``askfirst.rewrite_new_words_above`` set, :func:`mostly_new_words` tells the program
to search the turn instead (off by default: the one translation had led to the right "I don't know").
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from askfirst.programs.askfirst.key_terms import content_stems
from askfirst.programs.common.conversation import user_turns

# "[doc-id]", as the responders cite and format_passages show: an id has a digit or a joiner ("[Classifier]", the text of a
# Markdown link in an MTRAG-UN agent turn, is a word)
_TAG = re.compile(r"\s*\[([^\[\]\s]*[-_:.\d][^\[\]\s]*)\]")
_NOT_WORD = re.compile(r"\W+")


def checked_rewrite(question: str, rewrite: str, *, every_turn: bool = False) -> str | None:
    """``rewrite`` stripped, or ``None`` when it is not a rewrite of ``question``: empty, or no question where the user
    asked one (``question`` ends with "?" and ``rewrite`` has none).

    Args:
        every_turn: Hold every rewrite to being a question, as the signature asks. Off, a user's statement ("I heard the
            toolchain is not available in South America.") may come back as a statement. On MTRAG-UN dev all seven that
            did were answers ("The toolchain is not available in South America. It is important to ensure that ..."), yet
            searching those turns as written lost one route on each half, so it is off by default.
    """
    text = rewrite.strip()
    if not text or ("?" not in text and (every_turn or question.rstrip().endswith("?"))):
        return None
    return text


def without_copied_tags(rewrite: str, history: str) -> str:
    """``rewrite`` without the bracketed ids (``[housing-residence-halls]``) that the conversation's earlier turns carry;
    brackets the history does not have, or around a plain word, are left, since the user may have written them."""
    seen = set(_TAG.findall(history))
    return _TAG.sub(lambda m: "" if m.group(1) in seen else m.group(0), rewrite).strip()


def repeats_earlier_turn(question: str, rewrite: str, history: str) -> bool:
    """Whether ``rewrite`` is one of the conversation's earlier user turns (case, punctuation and spacing aside) and not
    ``question`` itself: a copy of a question already asked, not a rewrite of this one."""
    return copies_one_of(question, rewrite, user_turns(history))


def copies_one_of(question: str, rewrite: str, texts: Iterable[str]) -> bool:
    """Whether ``rewrite`` is one of ``texts`` (earlier user turns, or the rewrite step's demonstrations' rewrites; case,
    punctuation and spacing aside) and not ``question`` itself: a copy of another question, not a rewrite of this one."""
    said = _words(rewrite)
    return bool(said) and said != _words(question) and any(said == _words(text) for text in texts)


def mostly_new_words(rewrite: str, conversation: str, *, above: float, min_words: int = 3) -> bool:
    """Whether more than ``above`` of ``rewrite``'s content words (by stem), and at least ``min_words`` of them, are
    words ``conversation`` (the earlier turns and the question) does not have. The floor keeps a short rewrite that
    names its thing in full ("What is the Hubble Space Telescope?" of "Hubble?"), which the user would accept."""
    words = content_stems(rewrite)
    new = words - content_stems(conversation)
    return len(new) >= min_words and len(new) > above * len(words)


def same_words(text: str, other: str) -> bool:
    """Whether ``text`` and ``other`` say the same words in the same order, case, punctuation and spacing aside."""
    return _words(text) == _words(other)


def _words(text: str) -> str:
    return _NOT_WORD.sub(" ", text.lower()).strip()
