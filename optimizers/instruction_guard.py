"""Instruction candidates that are no instruction, left out before MIPROv2 searches (``compile.instruction_guard``).

A small prompt model asked to write a step's instruction often writes to the user instead. MIPROv2 with the offline 1.5B
model and only a prompting tip as context (``bench/RESULTS.md``, "MIPROv2 with the offline LMs") proposed, for the
complete-answer step, "Please provide the latest question for me to answer using ONLY the provided passages and the
conversation." and "I'm sorry, but I cannot generate a new instruction without additional information. …"; for the
clarification step, "What is the name of the pass that you are purchasing? (single fare, day pass, monthly pass)"; for
the per-passage answers, "none". MIPROv2 samples one candidate for every step in each trial, so with half the candidates
like these nearly every trial carries one, and the search compares broken programs rather than instructions.
"""

from __future__ import annotations

import logging
import re

import dspy

logger = logging.getLogger(__name__)

MIN_WORDS = 5
# A reply to the user, not an instruction to the step: an apology, or a request for something the step already gets.
_TO_THE_USER = re.compile(r"^\s*(i'?m sorry|i am sorry|sorry|please provide|please give|could you|can you|would you)\b", re.IGNORECASE)
_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”|'[^']*[?][^']*'")


def not_an_instruction(text: str) -> str | None:
    """Why ``text`` is no instruction for a step, or ``None`` when it may be one.

    A question mark outside quotes makes it a question to the user; an instruction may quote an example question
    ("for example: \"Do you mean the day pass or the monthly pass?\"").
    """
    if len(text.split()) < MIN_WORDS:
        return f"under {MIN_WORDS} words"
    if _TO_THE_USER.match(text):
        return "written to the user"
    if "?" in _QUOTED.sub("", text):
        return "a question to the user"
    return None


def guarded(candidates: dict[int, list[str]], names: list[str]) -> dict[int, list[str]]:
    """``candidates`` (MIPROv2's instruction candidates by predictor index, the original first) without those that are
    no instruction. The original is always kept, so every step still has a candidate."""
    kept = {}
    for i, texts in candidates.items():
        kept[i] = [texts[0]]
        for text in texts[1:]:
            reason = not_an_instruction(text)
            if reason is None:
                kept[i].append(text)
            else:
                logger.warning("instruction candidate for %s left out (%s): %r", names[i], reason, text[:120])
    return kept


class GuardedMIPROv2(dspy.MIPROv2):
    """``dspy.MIPROv2`` whose search sees only candidates that are instructions.

    It overrides MIPROv2's private ``_propose_instructions`` (DSPy 3.4's), the one place the candidates exist before the
    search starts; a test pins that it is still called so, with the candidates keyed by predictor index.
    """

    def _propose_instructions(self, program, *args, **kwargs) -> dict[int, list[str]]:
        candidates = super()._propose_instructions(program, *args, **kwargs)
        return guarded(candidates, [name for name, _ in program.named_predictors()])
