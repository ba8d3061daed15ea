"""The signatures' instructions must not teach the demo set's answers.

Their examples once were the demo's own questions and gold options ("the tuition, the lab fee or the registration
fee" for demo c01 "How much is the fee?", "parking permit" for u01), so the demo's numbers measured a prompt that had
seen the test. Any two adjacent content words (stemmed) shared with a demo question, clarification option or corpus
title count as a leak.
"""

import importlib
import inspect
import pkgutil

import dspy

import askfirst.signatures as signatures
from askfirst.datasets.corpus import load_corpus
from askfirst.datasets.questions import load_questions
from askfirst.programs.askfirst.key_terms import stem
from askfirst.retrieval.bm25 import tokenize


def word_pairs(text: str) -> set[tuple[str, str]]:
    stems = [stem(token) for token in tokenize(text)]
    return set(zip(stems, stems[1:]))


def demo_pairs() -> set[tuple[str, str]]:
    pairs: set[tuple[str, str]] = set()
    for example in load_questions("demo"):
        for text in [turn["content"] for turn in example.conversation if turn["role"] == "user"] + example.clarification_options:
            pairs |= word_pairs(text)
    for document in load_corpus("demo"):
        pairs |= word_pairs(document.title)
    return pairs


def signature_classes() -> list[type[dspy.Signature]]:
    found = []
    for module_info in pkgutil.iter_modules(signatures.__path__):
        module = importlib.import_module(f"{signatures.__name__}.{module_info.name}")
        found += [c for c in vars(module).values()
                  if inspect.isclass(c) and issubclass(c, dspy.Signature) and c.__module__ == module.__name__]
    return found


def prompt_text(signature: type[dspy.Signature]) -> str:
    descriptions = [(field.json_schema_extra or {}).get("desc", "") for field in signature.model_fields.values()]
    return " ".join([signature.instructions, *descriptions])


def test_the_scan_finds_a_demo_phrase_and_sees_every_signature():
    classes = {c.__name__ for c in signature_classes()}
    assert {"ClarificationRequest", "AssessEvidence", "ClassifyAnswerability", "AssignTitle"} <= classes
    assert ("registr", "fee") in demo_pairs() & word_pairs('Do you mean the lab fee or the registration fee?')


def test_no_signature_instruction_quotes_the_demo_set():
    demo = demo_pairs()
    leaks = {c.__name__: sorted(word_pairs(prompt_text(c)) & demo) for c in signature_classes()}
    assert {name: pairs for name, pairs in leaks.items() if pairs} == {}
