"""The standalone rewrite as a search query, refused when the rewriter answered instead of rewriting.

The offline 0.5B rewriter sometimes writes an answer where a question belongs: "Is Sweden politically neutral?" came
back as "Sweden is not politically neutral. It is a country with …" (MTRAG-UN dev), and the demo's "And what do
part-time students pay?" as "Part-time students pay EUR 4,200 per semester [fees-tuition-part-time]", copied from the
earlier answer. Searching with that finds what the rewriter believed, not what the user asked.

It also copies earlier answers' citation tags into a rewrite that is a question: the demo's "By when do I have to apply
for one of them?", after an answer citing [housing-residence-halls], came back as itself with the tag appended (AVX2
machine, 2026-11-29). A tag is no word the user said, so :func:`without_copied_tags` takes it out.
"""

from __future__ import annotations

import re

# "[doc-id]", as the responders cite and format_passages show: an id has a digit or a joiner ("[Classifier]", the text of a
# Markdown link in an MTRAG-UN agent turn, is a word)
_TAG = re.compile(r"\s*\[([^\[\]\s]*[-_:.\d][^\[\]\s]*)\]")


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
