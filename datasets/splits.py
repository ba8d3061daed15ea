"""Train/validation splits by conversation, and the question and document selection a config describes."""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter

import dspy

from askfirst.config import AskFirstConfig
from askfirst.datasets.corpus import Document, load_corpus
from askfirst.datasets.errors import DataError
from askfirst.datasets.questions import load_questions

HALF = 0.5  # data.split's halves: fixed, so no compile setting can move a validation question into what a compile sees


def split_by_conversation(examples: list[dspy.Example], *, train_fraction: float, seed: int = 0) -> tuple[list, list]:
    """Deterministic train/validation split that keeps each conversation's turns on one side.

    Conversations are ordered by a hash of their id (and the seed) and the first ``train_fraction`` of them
    form the trainset, so the split does not depend on the file's order and never leaks a conversation.
    """
    def conversation(example) -> str:
        return str(example.get("conversation_id") or example.id)

    ids = sorted({conversation(e) for e in examples}, key=lambda c: hashlib.sha256(f"{seed}:{c}".encode()).hexdigest())
    if len(ids) < 2:
        raise DataError(f"cannot split {len(examples)} examples from {len(ids)} conversation(s) into non-empty train and validation sets")
    n_train = min(max(round(len(ids) * train_fraction), 1), len(ids) - 1)
    train_ids = set(ids[:n_train])
    return [e for e in examples if conversation(e) in train_ids], [e for e in examples if conversation(e) not in train_ids]


def configured_questions(config: AskFirstConfig, *, split: str | None = None) -> list[dspy.Example]:
    """The questions a config names: ``data.questions`` (shuffled with ``seed`` if ``data.shuffle``), cut to
    ``data.per_label`` of each answerability label, past ``data.offset`` and to ``data.limit``, then the ``data.split`` half (half of the
    conversations each, whatever ``compile.train_fraction`` says: that only divides what a compile sees), then to
    ``data.ids``.

    The limit is applied before splitting, so ``compile --limit 40`` and ``eval --limit 40 --set
    data.split=validation`` see the same validation questions.

    Args:
        split: Overrides ``data.split`` (``all``, ``train`` or ``validation``).
    """
    data = config.data
    examples = load_questions(data.questions, data_dir=data.shared_data_dir)
    if data.shuffle:
        random.Random(config.seed).shuffle(examples)
    if data.per_label:
        examples = first_per_label(examples, data.per_label)
    examples = examples[data.offset:]
    examples = examples[:data.limit] if data.limit else examples
    split = split or data.split
    if split != "all":
        train, val = split_by_conversation(examples, train_fraction=HALF, seed=config.seed)
        examples = train if split == "train" else val
    return only_ids(examples, data.ids) if data.ids else examples


def only_ids(examples: list[dspy.Example], ids: list[str]) -> list[dspy.Example]:
    """The examples whose id is one of ``ids``, in their order.

    Raises:
        DataError: An id is not among ``examples`` (a typo, or a task of the other half), named with the count.
    """
    wanted = set(ids)
    missing = wanted - {e.id for e in examples}
    if missing:
        raise DataError(f"data.ids: {len(missing)} of {len(wanted)} ids are not among the {len(examples)} selected questions "
                        f"(data.questions, limit, per_label, split): {', '.join(sorted(missing)[:5])}")
    return [e for e in examples if e.id in wanted]


def first_per_label(examples: list[dspy.Example], n: int) -> list[dspy.Example]:
    """The first ``n`` examples of each answerability label, in their order."""
    taken: Counter = Counter()
    kept = []
    for example in examples:
        taken[example.answerability] += 1
        if taken[example.answerability] <= n:
            kept.append(example)
    return kept


def question_selection(config: AskFirstConfig) -> str:
    """What decides which questions ``configured_questions`` picks (and so a question-scoped corpus), as JSON."""
    data = config.data
    return json.dumps([data.questions, data.limit, data.split] + (["shuffle", config.seed] if data.shuffle else [])
                      + (["per_label", data.per_label] if data.per_label else []) + (["offset", data.offset] if data.offset else [])
                      + (["ids", sorted(data.ids)] if data.ids else []))


def configured_corpus(config: AskFirstConfig) -> list[Document]:
    """The documents a config indexes: ``data.corpus``, or with ``data.corpus_scope=questions`` only those
    the configured questions cite as gold.

    Raises:
        DataError: The scope leaves no document (the questions cite none of the corpus).
    """
    data = config.data
    docs = load_corpus(data.corpus, data_dir=data.shared_data_dir)
    if data.corpus_scope == "all":
        return docs
    cited = {d for e in configured_questions(config) for d in list(e.get("gold_passages") or []) + list(e.get("qrels") or {})}
    scoped = [d for d in docs if d.doc_id in cited]
    if not scoped:
        raise DataError(f"data.corpus_scope=questions: the {data.questions!r} questions cite no document of {data.corpus!r}")
    return scoped
