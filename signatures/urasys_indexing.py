"""URASys indexing: Chunk-and-Title (Phase 1) and Ask-and-Augment (Phase 2)."""

import dspy

from askfirst.signatures.bounds import FAQPairList, ParaphraseList


class RewriteChunk(dspy.Signature):
    """Rewrite the chunk so that it can be read on its own, using the whole document only for context.
    Replace pronouns and vague references ("it", "this fare", "the office") with what they refer to, and
    repair sentences cut at the chunk's edges. Keep every fact, number and name of the chunk exactly;
    add nothing that is not in the document; do not summarise."""

    document_title: str = dspy.InputField()
    document: str = dspy.InputField(desc="The whole document the chunk comes from")
    chunk: str = dspy.InputField()
    rewritten_chunk: str = dspy.OutputField(desc="The self-contained, fluent chunk")


class AssignTitle(dspy.Signature):
    """Write a concise, descriptive title for the chunk: the specific topic it covers, with its key terms
    (for example "Monthly pass fares for zone 2"), in at most 12 words."""

    chunk: str = dspy.InputField()
    title: str = dspy.OutputField()


class CreateFAQs(dspy.Signature):
    """Write question-answer pairs that a user might ask and that this titled chunk answers.
    Each question asks for one specific fact, naming its subject (no "it" or "this"); each answer is taken
    only from the chunk, is short, and answers its question completely. Write up to the requested number
    of pairs, fewer if the chunk has fewer facts; never repeat a question."""

    titled_chunk: str = dspy.InputField(desc="'# title' followed by the chunk")
    number_of_pairs: int = dspy.InputField()
    faqs: FAQPairList = dspy.OutputField(desc="List of {question, answer} objects")


class ExpandFAQ(dspy.Signature):
    """Paraphrase the question in different ways a user might ask it: other words, other word order, more
    or less formal. Every paraphrase must ask for exactly the same thing, so that the same answer fits."""

    question: str = dspy.InputField()
    answer: str = dspy.InputField(desc="The answer every paraphrase must share")
    number_of_paraphrases: int = dspy.InputField()
    paraphrases: ParaphraseList = dspy.OutputField()
