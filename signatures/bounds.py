"""Length-bounded output types.

The bounds become ``maxItems``/``maxLength`` in the JSON schema that constrained decoding enforces, so a
small model cannot loop inside a list until it runs out of tokens; the adapter validates them too.
Each list type is a named alias because DSPy keeps a field's bare annotation: a top-level
``Annotated[list, Field(max_length=…)]`` would lose its bound on the way to the schema.
"""

from typing import Annotated

from pydantic import Field, StringConstraints
from typing_extensions import TypeAliasType

ShortText = Annotated[str, StringConstraints(max_length=160)]
PassageId = Annotated[str, StringConstraints(max_length=80)]

QueryList = TypeAliasType("QueryList", Annotated[list[ShortText], Field(max_length=4)])
NoteList = TypeAliasType("NoteList", Annotated[list[ShortText], Field(max_length=3)])
IdList = TypeAliasType("IdList", Annotated[list[PassageId], Field(max_length=10)])
OptionList = TypeAliasType("OptionList", Annotated[list[ShortText], Field(max_length=6)])

# Free text is bounded too: a grammar-closed string always parses, where a max_tokens cut never does.
AnswerText = TypeAliasType("AnswerText", Annotated[str, StringConstraints(max_length=700)])
BriefText = TypeAliasType("BriefText", Annotated[str, StringConstraints(max_length=300)])
