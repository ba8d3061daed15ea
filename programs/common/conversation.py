"""Conversations as the programs see them, and the text forms the Signatures take."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, get_args

from askfirst.retrieval.chunking import Passage

if TYPE_CHECKING:
    from askfirst.config import ProgramConfig

Role = Literal["user", "assistant"]
_ROLE_LABEL = re.compile(rf"^({'|'.join(get_args(Role))}): ", re.MULTILINE)  # as format_history writes it


class ConversationError(ValueError):
    """A conversation the program cannot answer (empty, or not ending with a user turn)."""


@dataclass(frozen=True)
class Turn:
    role: Role
    content: str


def to_turns(conversation: str | list) -> list[Turn]:
    """Accept a question string or a list of ``{"role", "content"}`` dicts (``speaker``/``text`` too, as in MTRAG)."""
    if isinstance(conversation, str):
        items = [{"role": "user", "content": conversation}]
    else:
        items = conversation
    if not isinstance(items, list):
        raise ConversationError(f"a conversation is a question or a list of {{role, content}} turns, not {type(items).__name__}")
    turns = []
    for number, item in enumerate(items, start=1):
        if isinstance(item, Turn):
            turns.append(item)
            continue
        if not isinstance(item, dict):
            raise ConversationError(f"turn {number} is {type(item).__name__} {str(item)[:40]!r}; each turn is an object "
                                    '{"role": "user" or "assistant", "content": "..."}')
        role = item.get("role", item.get("speaker", "user"))
        role = "assistant" if role in ("assistant", "agent", "system_response") else "user"
        turns.append(Turn(role, str(item.get("content", item.get("text", "")))))
    if not turns or turns[-1].role != "user":
        raise ConversationError("the conversation must end with a user turn")
    if not turns[-1].content.strip():
        raise ConversationError("the question is empty")
    return turns


def format_history(turns: list[Turn], *, max_turns: int, max_chars: int = 600) -> str:
    """Earlier turns (all but the last), newest ``max_turns`` kept, each cut to ``max_chars``."""
    earlier = turns[:-1][-max_turns:] if max_turns else []
    return "\n".join(f"{t.role}: {t.content[:max_chars]}" for t in earlier)


def history_text(history: str) -> str:
    """What the turns of a :func:`format_history` string say, without their role labels (a document titled
    "Teaching assistant posts" is not named by every assistant turn)."""
    return _ROLE_LABEL.sub("", history)


def user_turns(history: str) -> list[str]:
    """The user turns of a :func:`format_history` string (as cut there), oldest first."""
    parts = _ROLE_LABEL.split(history)  # ["", role, text, role, text, ...]: a turn's own line breaks stay in its text
    return [text.strip() for role, text in zip(parts[1::2], parts[2::2]) if role == "user"]


def previous_user_turn(history: str) -> str | None:
    """The user turn before the question: the newest of a :func:`format_history` string (as cut there), or ``None``."""
    users = user_turns(history)
    return users[-1] if users and users[-1] else None


def format_passages(passages: list[Passage], *, max_chars: int) -> str:
    """Passages as ``[id] title: text``, the form every Signature reads and cites from."""
    lines = []
    for p in passages:
        text = p.text if len(p.text) <= max_chars else p.text[:max_chars].rsplit(" ", 1)[0] + " ..."
        lines.append(f"[{p.passage_id}] {p.title}: {text}")
    return "\n".join(lines)


def question_and_history(conversation, config: ProgramConfig) -> tuple[str, str, list[str]]:
    """The latest question (cut to the program config's ``max_question_chars``), the history (its last
    ``history_turns`` turns, formatted), and warnings about any cut."""
    max_question_chars, history_turns = config.max_question_chars, config.history_turns
    turns = to_turns(conversation)
    warnings = []
    question = turns[-1].content
    if len(question) > max_question_chars:
        warnings.append(f"question cut from {len(question)} to {max_question_chars} characters")
        question = question[:max_question_chars]
    return question, format_history(turns, max_turns=history_turns), warnings


def with_history(question: str, history: str) -> str:
    """The question with the conversation so far appended, for steps whose Signature has no history field."""
    return f"{question}\n(Conversation so far:\n{history})" if history else question
