"""The standalone rewrite as a search query, refused when the rewriter answered instead of rewriting.

The offline 0.5B rewriter sometimes writes an answer where a question belongs: "Is Sweden politically neutral?" came
back as "Sweden is not politically neutral. It is a country with …" (MTRAG-UN dev), and the demo's "And what do
part-time students pay?" as "Part-time students pay EUR 4,200 per semester [fees-tuition-part-time]", copied from the
earlier answer. Searching with that finds what the rewriter believed, not what the user asked.
"""

from __future__ import annotations

import re

_BRACKETED = re.compile(r"\[[^\]]*\]|\([^)]*\)")


def checked_rewrite(question: str, rewrite: str, *, every_turn: bool = False) -> str | None:
    """``rewrite`` stripped, or ``None`` when it is not a rewrite of ``question``: empty, or no question where the user
    asked one (``question`` ends with "?" and ``rewrite`` has none), or, where the user's turn ends with its question,
    words after the rewrite's last "?" other than a bracketed citation: an answer appended ("Who is the lead guitarist
    of Blue Öyster Cult? Blue Öyster Cult's lead guitarist is John Lennon.", 5 of 444 recorded rewrites on MTRAG).

    Args:
        every_turn: Hold every rewrite to being a question, as the signature asks. Off, a user's statement ("I heard the
            toolchain is not available in South America.") may come back as a statement. On MTRAG-UN dev all seven that
            did were answers ("The toolchain is not available in South America. It is important to ensure that ..."), yet
            searching those turns as written lost one route on each half, so it is off by default.
    """
    text, asked = rewrite.strip(), question.rstrip().endswith("?")
    if not text or ("?" not in text and (every_turn or asked)):
        return None
    if asked and re.search(r"\w", _BRACKETED.sub("", text[text.rfind("?") + 1:])):
        return None
    return text
