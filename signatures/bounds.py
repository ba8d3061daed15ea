"""Length-bounded output types.

The bounds become ``maxItems``/``maxLength`` in the JSON schema that constrained decoding enforces, so a
small model cannot loop inside a list until it runs out of tokens, and a grammar-closed string always
parses where a ``max_tokens`` cut never does. The adapter validates the bounds too.

Each type is a real class (a ``list`` subclass carrying its own pydantic schema): DSPy keeps only a
field's bare annotation, so ``Annotated[list, Field(max_length=…)]`` would lose its bound, and its
optimisers rebuild Signatures with a check that accepts classes but not type aliases.

Free-text fields stay plain ``str``: DSPy parses any other string annotation with ``literal_eval``
(``"4,200"`` would become the tuple ``(4, 200)``). The llama.cpp engine bounds those instead
(``lm.max_text_chars``).
"""

from __future__ import annotations

from pydantic import GetCoreSchemaHandler
from pydantic_core import core_schema


def _bounded_list(name: str, *, max_items: int, max_chars: int) -> type:
    def schema(cls, source, handler: GetCoreSchemaHandler):
        items = core_schema.list_schema(core_schema.str_schema(max_length=max_chars), max_length=max_items)
        return core_schema.no_info_after_validator_function(cls, items, serialization=core_schema.plain_serializer_function_ser_schema(list))

    return type(name, (list,), {"__get_pydantic_core_schema__": classmethod(schema), "__doc__": f"At most {max_items} strings of at most {max_chars} characters."})


QueryList = _bounded_list("QueryList", max_items=4, max_chars=160)
NoteList = _bounded_list("NoteList", max_items=3, max_chars=160)
IdList = _bounded_list("IdList", max_items=10, max_chars=80)
OptionList = _bounded_list("OptionList", max_items=6, max_chars=160)
OneQuery = _bounded_list("OneQuery", max_items=1, max_chars=160)  # zero or one search query


def _bounded_records(name: str, *, keys: tuple[str, str], max_items: int, max_chars: int) -> type:
    def schema(cls, source, handler: GetCoreSchemaHandler):
        text = core_schema.str_schema(max_length=max_chars)
        record = core_schema.typed_dict_schema({key: core_schema.typed_dict_field(text) for key in keys})
        items = core_schema.list_schema(record, max_length=max_items)
        return core_schema.no_info_after_validator_function(cls, items, serialization=core_schema.plain_serializer_function_ser_schema(list))

    fields = ", ".join(keys)
    return type(name, (list,), {"__get_pydantic_core_schema__": classmethod(schema),
                                "__doc__": f"At most {max_items} {{{fields}}} objects, each text at most {max_chars} characters."})


ParaphraseList = _bounded_list("ParaphraseList", max_items=5, max_chars=200)
FAQPairList = _bounded_records("FAQPairList", keys=("question", "answer"), max_items=8, max_chars=300)
PassageAnswerList = _bounded_records("PassageAnswerList", keys=("passage_id", "answer"), max_items=8, max_chars=120)
