"""Evidence divergence: the question has readings the collection tells apart when passages from different documents
give it different answers; those documents' titles are the readings a clarifying question offers."""

from __future__ import annotations

import re
from collections.abc import Callable

from askfirst.evaluation.answer_metrics import normalize_answer
from askfirst.programs.askfirst.absent_terms import content_words
from askfirst.programs.askfirst.key_terms import content_stems, documents_with, echoes, passage_stems, stem
from askfirst.programs.askfirst.question_form import AUXILIARIES
from askfirst.programs.common.conversation import history_text
from askfirst.retrieval.bm25 import tokenize
from askfirst.retrieval.chunking import Passage


def reading_name(passage: Passage, *, words: int = 8, name_within: int = 3) -> str:
    """What a clarifying question calls the reading a document gives: its title, else the opening words of the passage
    (a corpus of untitled paragraphs, such as SQuAD's, would otherwise offer its opaque document ids).

    The opening runs on through a name that begins within ``name_within`` words of the cut, so it ends after the name
    rather than just before it: "On December 30, 1922, with the creation of the Soviet Union …", not "… creation of
    …", which left a SQuAD2 question's "the union" unnamed. A Markdown link counts as its text (MTRAG's IBM Cloud pages).
    """
    if (passage.title or "").strip():
        return passage.title
    opening = _MARKDOWN_LINK.sub(r"\1", passage.text).split()
    if not opening:
        return passage.doc_id
    cut = min(words, len(opening))
    start = next((i for i in range(cut, min(cut + name_within, len(opening))) if _begins_name(opening, i)), None)
    if start is not None:
        cut = start + 1
        while cut < len(opening) and _begins_name(opening, cut):
            cut += 1
    name = " ".join(opening[:cut]).rstrip(",;:")
    if len(opening) <= cut:
        return name
    # a sentence's full stop before the ellipsis goes, an abbreviation's ("U.S.") stays
    return (name[:-1] if name.endswith(".") and "." not in opening[cut - 1][:-1] else name) + " …"


_MARKDOWN_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")


def _begins_name(words: list[str], i: int) -> bool:
    """Whether ``words[i]`` is a capitalised word inside a sentence (after a sentence's end, a capital names nothing),
    not a month, weekday or season, and not after a comma or colon that ends the name before it."""
    word, before = words[i], words[i - 1] if i else "."
    return (word[:1].isupper() and not before.endswith((".", "!", "?", ",", ";", ":"))
            and word.strip(".,;:!?()\"'").lower() not in _NOT_NAMES)


# A clarification left with no option the passages back asks for what would tell the readings apart.
UNSAID_CHOICE = "Which one do you mean? Please add a detail, such as a name, a place or a date, that says which."


def ungrounded_options(options: list[str], passages: list[Passage], said: str) -> list[str]:
    """The ``options`` of which no more than half the content words are in a passage or in ``said`` (the user's turns),
    by stem or as the start of one ("lab" of "laboratory"): options the clarification responder did not find in the
    passages. On a SQuAD2 question whose passages say nothing of fees, the offline 1.5B offered its instruction's
    example, "the tuition, the lab fee or the registration fee". A sentence-long option that paraphrases a passage
    keeps most of its words."""
    known = passage_stems(passages) | content_stems(said)

    def has(word: str) -> bool:
        return word in known or (len(word) >= 3 and any(k.startswith(word) for k in known))

    def grounded(option: str) -> bool:
        words = content_stems(option)
        return not words or 2 * sum(map(has, words)) > len(words)

    return [option for option in options if not grounded(option)]


# Verbs that make a run of words a sentence; a reading's name seldom has one ("Who Is Afraid" is a title of three words).
# The question forms' auxiliaries, affirmative, with the participles of "be".
_SENTENCE_VERBS = frozenset(w for w in AUXILIARIES if "'" not in w) | {"been", "being"}


def not_readings(options: list[str], question: str, *, max_name_words: int = 8) -> list[str]:
    """The ``options`` that name no reading of ``question``: a sentence (more than ``max_name_words`` words with an
    auxiliary verb) and an option that :func:`echoes` the question (all its content words are the question's own).

    The offline 1.5B copied passage sentences as its options: "The tricolor flag is a symbol of Irish heritage and
    tradition." and four more like it (MTRAG-UN training half), and cut its passage on a burger chain's shares into five
    pieces of 22 to 27 words (validation half). The longest name it offered there is eight words ("Wolk Superior Court of
    California, County of Yuba"). It also offered the user's own words, "fast food chain" for "How did the fast food
    chain establish a significant presence in the United States?" and "Judges Roster" for "Does this Superior Court
    publish judges roster?": an answer to "which one?" that the question already gave."""

    def sentence(option: str) -> bool:
        words = option.split()
        return len(words) > max_name_words and any(w.strip(".,;:!?\"'").lower() in _SENTENCE_VERBS for w in words)

    return [option for option in options if sentence(option) or echoes(option, question)]


def titled_readings(words: list[str], passages: list[Passage], *, most: int = 4) -> list[str]:
    """The titles of the first ``most`` documents among ``passages`` (in their order) whose titles have every one of
    ``words`` (by stem), when two or more do, else of those whose title or text has them: the things of that kind the
    collection holds, as a clarification's options when the clarification responder named fewer than two, or only
    kinds of the thing (:func:`names_kinds`). A title that names the kind names one of them ("Flag of France" for "this
    tricolor national flag"), where a text may only mention it (a swimming page's "red flag"). Untitled documents are
    passed over (an opening of words names no reading a user would choose by); empty when ``words`` is.

    On MTRAG-UN dev the offline 1.5B offered no option for "this tricolor national flag" over the flags of France and
    Ireland, and only "Pet Policy" for "the pets in the park" over three state parks' pages."""
    stems = {stem(w.lower()) for w in words}
    if not stems:
        return []
    titles: dict[str, str] = {}  # each titled document's title, in the order of its first passage
    for passage in passages:
        if (passage.title or "").strip():
            titles.setdefault(passage.doc_id, " ".join(passage.title.split()))
    chosen = [doc for doc, title in titles.items() if stems <= {stem(t) for t in tokenize(title)}]
    if len(chosen) < 2:  # fewer than two titles name the kind: the documents whose titles or texts have it
        having = set.intersection(*(documents_with(word, passages) for word in words))
        chosen = [doc for doc in titles if doc in having]
    return list(dict.fromkeys(titles[doc] for doc in chosen))[:most]


def names_kinds(options: list[str], question: str, titles: list[str]) -> bool:
    """Whether ``options`` name kinds of what ``question`` asks about rather than things of that kind: none has a capital
    letter or a digit (a name or a number says which), more than half share a content word with the question, and none
    is one of ``titles`` (the documents of the kind, :func:`titled_readings`; all its content words in one). The offline
    1.5B offered "restaurant chain; fast food restaurant; restaurant" for "How did the fast food chain establish a
    significant presence in the United States?" over the pages of Jack in the Box and Chipotle Mexican Grill (MTRAG-UN
    validation half). "lab fee; registration fee" for "How much is the fee?" beside a page titled "Registration fee"
    names things of the kind; "moose; guinea pig" for "this animal" shares no word with its question."""
    asked = content_stems(question)
    return (bool(options) and not any(re.search(r"[A-Z\d]", o) for o in options)
            and 2 * sum(bool(content_stems(o) & asked) for o in options) > len(options)
            and not any(content_stems(o) <= content_stems(t) for o in options for t in titles))


_ASKS_MEANING = re.compile(r"\b(?:mean|meant|refer|referring)\b", re.IGNORECASE)


def asks_which(question: str, options: list[str]) -> bool:
    """Whether a clarifying ``question`` offers a choice: it names two or more of ``options`` or asks what the user
    means ("Which country do you mean?"). The offline 1.5B also wrote questions of its own beside good options: "Which
    of the above options is the Prime Minister of Canada?" and "Which actor played the character of a young boy in the
    TV series Friends?" (MTRAG-UN dev), which ask the user to answer rather than to choose."""
    named = sum(option.lower() in question.lower() for option in options)
    return named >= 2 or bool(_ASKS_MEANING.search(question))


def repeated_example(question: str, instruction: str, passages: list[Passage], said: str, *, min_words: int = 3,
                     min_pairs: int = 2) -> list[str]:
    """The words of ``instruction``'s quoted examples that a clarifying ``question`` repeats and neither the passages nor
    ``said`` (the user's turns, the options kept) have, when there are at least ``min_words`` of them; else its two-word
    phrases (adjacent content words) that it repeats and no passage or ``said`` has, when there are at least
    ``min_pairs`` of them; else empty. The offline 1.5B took its options from the passages and then wrote its
    instruction's example as the question: "Do you mean the single fare, the day pass or the monthly pass?" of a SQuAD2
    question on Netscape. Passages on trading have "single", "day" and "monthly", but not "day pass": on MTRAG-UN it
    asked "Do you mean the single fund, the day pass or the monthly pass?" of index funds."""
    quoted = " ".join(re.findall(r'"([^"]+)"', instruction))
    words = sorted((content_stems(question) & content_stems(quoted)) - passage_stems(passages) - content_stems(said))
    if len(words) >= min_words:
        return words
    repeated = _stem_pairs(question) & _stem_pairs(quoted)
    if len(repeated) < min_pairs:  # mostly so: then the passages need not be read for phrases
        return []
    repeated -= set().union(*(_stem_pairs(f"{p.title} {p.text}") for p in passages), _stem_pairs(said))
    return sorted(" ".join(pair) for pair in repeated) if len(repeated) >= min_pairs else []


def _stem_pairs(text: str) -> set[tuple[str, str]]:
    """The stems of ``text``'s adjacent content words (BM25's tokens), in pairs: "the day pass" has ("day", "pass").
    "mean" is left out: every clarifying question asks what the user means, so "mean the single …" shows no copying."""
    stems = [s for s in map(stem, tokenize(text)) if s != "mean"]
    return set(zip(stems, stems[1:]))


_MONTHS = "january february march april may june july august september october november december".split()
# "May" only as written with a capital: "students may take …" names no month. "fall" is left out for "prices fall".
_TIME_WORDS = frozenset(_MONTHS + [m[:3] for m in _MONTHS] + "sept monday tuesday wednesday thursday friday saturday sunday "
                        "spring summer autumn winter".split()) - {"may"}
_NOT_NAMES = _TIME_WORDS | {"may"}  # a capital "May" is the month: it ends a reading's name, as other time words do
_NUMBER_WORDS = frozenset("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
                          "seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand "
                          "million billion".split())
_TOKEN = re.compile(r"\d[\d,.]*\d|\d|[A-Za-z]+")


def typed_answer(answer: str, kind: str) -> str:
    """The times (``kind`` "time": numbers in digits, months, weekdays, seasons) or numbers ("quantity", in digits or
    words) that ``answer`` names, as one comparable string; empty when it names none, so it is no answer of that kind
    ("Students may take at most one elective …" names no time)."""
    words = _TIME_WORDS if kind == "time" else _NUMBER_WORDS
    found = {t.replace(",", "").lower() for t in _TOKEN.findall(answer)
             if t[0].isdigit() or t.lower() in words or (kind == "time" and t == "May")}
    return " ".join(sorted(found))


def rarest_word(question: str, frequency: Callable[[str], int | None]) -> str | None:
    """The content word of ``question`` (BM25's tokens, no function or quantity words) that the fewest passages of the
    collection have, by ``frequency`` (the BM25 index's document frequency); words the collection lacks and ties after
    the first are passed over. ``None`` when no word is in the collection or ``frequency`` knows none (no index)."""
    counts = {word: n for word in dict.fromkeys(content_words(question)) if (n := frequency(word))}
    return min(counts, key=counts.get) if counts else None


def divergent_options(candidates: list[tuple[Passage, str]], question: str = "", *, conversation: str = "",
                      kind: str | None = None, topic_word: str | None = None) -> list[str]:
    """The titles of the documents behind two or more different candidate answers (empty when they agree).

    A candidate of "none", or one that only repeats the question's own words ("CS 201" asked of CS 310's page when
    the question is about CS 201), takes no part; answers are compared after SQuAD normalisation, and documents are
    told apart by their ids, so two chunks of one document never diverge. A question that names one of those
    documents, by a title word no other of their titles has ("undergraduate" for "Undergraduate tuition" beside
    "Graduate tuition"), is not ambiguous: the other documents answer other questions. A title word they share
    ("fee", "scholarship") names a kind of thing, and so does a question that is nothing but one noun ("When is
    the deadline?"), whichever title has it. (Titles only: the words of the documents' texts named readings away
    on the demo; "undergraduate" is in the bursary's text.) With ``conversation`` (the earlier turns), a document the
    conversation names that way has been picked as well: "How long does the essay have to be?" after a turn about the
    Women in Computing Award is about that award's essay. With ``kind`` (``question_form.answer_type``: "time" or
    "quantity"), answers are compared by the times or numbers they name (:func:`typed_answer`), and one naming none
    takes no part. With ``topic_word`` (:func:`rarest_word`), a passage without it (by stem) takes no part when most
    candidate passages have it: it answers another question ("What are some common responses to sneezes …?" got "God
    bless you" from three passages and a sentence on company shares from a fourth). When only some have it, the word
    does not tell the topic: in a small collection the rarest word of a vague question ("When did the Europeans take
    control of the region near the Congo River?") is in one passage, and the others are its real readings.
    """
    asked_text = f" {normalize_answer(question)} "
    on_topic = [(p, a) for p, a in candidates if topic_word and stem(topic_word) in passage_stems([p])]
    if 2 * len(on_topic) > len(candidates):
        candidates = on_topic
    first_doc: dict[str, Passage] = {}
    for passage, answer in candidates:
        norm = normalize_answer(answer)
        if not norm or norm == "none" or (question and f" {norm} " in asked_text):
            continue
        if kind and not (norm := typed_answer(answer, kind)):
            continue
        if norm not in first_doc and passage.doc_id not in {p.doc_id for p in first_doc.values()}:
            first_doc[norm] = passage
    if len(first_doc) < 2:
        return []
    docs = list(first_doc.values())
    if named_reading(question, conversation, docs):
        return []
    return list(dict.fromkeys(reading_name(p) for p in docs))


def named_document(question: str, passages: list[Passage]) -> str | None:
    """The id of the first document of ``passages`` that ``question`` names by a title word none of the others' titles
    has, if any; a question of one content word names none (it names a kind: "When is the deadline?")."""
    content = content_stems(question)
    if len(content) <= 1:
        return None
    docs = list({p.doc_id: p for p in reversed(passages)}.values())[::-1]  # each document once, at its first passage
    for doc in docs:
        others = set().union(*(content_stems(o.title) for o in docs if o.doc_id != doc.doc_id))
        if (content_stems(doc.title) - others) & content:
            return doc.doc_id
    return None



def named_in_conversation(history: str, passages: list[Passage]) -> str | None:
    """:func:`named_document` on the conversation's earlier turns (a ``format_history`` string): the document an
    earlier turn named, which a follow-up's bare "the essay" refers to."""
    return named_document(history_text(history), passages)


def named_reading(question: str, conversation: str, passages: list[Passage]) -> tuple[str, str] | None:
    """Where a reading among ``passages`` is named and which: ``("question", doc_id)`` when ``question`` names one,
    else ``("conversation", doc_id)`` when the earlier turns do, else ``None``."""
    if doc := named_document(question, passages):
        return "question", doc
    if doc := named_in_conversation(conversation, passages):
        return "conversation", doc
    return None
