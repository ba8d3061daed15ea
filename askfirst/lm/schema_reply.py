"""A well-formed reply to any DSPy Signature, without a model: what stand-in LMs answer.

The tests' scripted engine (``tests/conftest.py``) and the throughput bench's mock OpenAI-compatible server
(``bench/mock_lm_server.py``) read the output fields and their types from the system prompt that DSPy's
adapters write, and answer every field with a scripted or placeholder value.
"""

from __future__ import annotations

import json
import re

_FIELD = re.compile(r"^\d+\. `(\w+)` \(([^)]*?)\)", flags=re.M)
REFLECTION_REPLY = "```\nAnswer only from the passages and cite passage ids.\n```"


def output_fields(system: str) -> list[tuple[str, str]]:
    """``(name, type text)`` of each output field DSPy's system prompt lists (empty for a free-form prompt)."""
    if "Your output fields are:" not in system:
        return []
    section = system.split("Your output fields are:", 1)[1].split("All interactions", 1)[0]
    return [(name, type_text.strip()) for name, type_text in _FIELD.findall(section)]


def placeholder(type_text: str):
    """A value of the field's type: the first label of a Literal, an empty list, 0.5, 1, True, or some text."""
    if type_text.startswith("Literal["):
        quoted = re.findall(r"'([^']*)'", type_text)
        return quoted[0] if quoted else int(re.findall(r"-?\d+", type_text)[0])
    if type_text.startswith(("list", "List", "OneQuery")) or type_text.split("[")[0].endswith("List"):  # QueryList, PassageAnswerList, ...
        return []
    if type_text == "float":
        return 0.5
    if type_text == "int":
        return 1
    if type_text == "bool":
        return True
    return "placeholder text"


def schema_reply(system: str, scripted: dict | None = None) -> str:
    """The reply text: JSON with every output field (``scripted`` values first), or a fenced instruction for a
    prompt with no output fields (GEPA's reflection prompt)."""
    fields = output_fields(system)
    if not fields:
        return REFLECTION_REPLY
    scripted = scripted or {}
    return json.dumps({name: scripted.get(name, placeholder(type_text)) for name, type_text in fields})
