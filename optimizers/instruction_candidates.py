"""The instruction candidates MIPROv2 searches over: the prompt model's, guarded, and a researcher's own from a file.

**The guard** (``compile.instruction_guard``). A small prompt model asked to write a step's instruction often writes to
the user instead. MIPROv2 with the offline 1.5B model and only a prompting tip as context (the results log (bench/RESULTS.md in git history),
"MIPROv2 with the offline LMs") proposed, for the complete-answer step, "Please provide the latest question for me to
answer using ONLY the provided passages and the conversation." and "I'm sorry, but I cannot generate a new instruction
without additional information. …"; for the clarification step, "What is the name of the pass that you are purchasing?
(single fare, day pass, monthly pass)"; for the per-passage answers, "none". On MTRAG-UN the ``outcome`` objective is
the route alone, so a trial with such a responder instruction scored as well as the seed: the search cannot reject them.

**A file of candidates** (``compile.instruction_candidates``): ``{step name: [instruction, ...]}`` in YAML or JSON, step
names as the compile diff names them (``assess``, ``responders.clarify``). They join the prompt model's candidates
unguarded, so a researcher can bring instructions written elsewhere (by hand, or by a stronger model than this machine
runs) and let MIPROv2 choose among them on the local LM.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import dspy
import yaml
from dspy.utils.exceptions import ContextWindowExceededError

from askfirst.config import ConfigError

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


def read_candidates(path: str | Path, step_names: list[str]) -> dict[str, list[str]]:
    """The instructions a file offers per step.

    Raises:
        ConfigError: The file is missing or unreadable, is not a mapping of step names to lists of non-empty strings,
            or names a step the program does not have (the message lists the steps it has).
    """
    p = Path(path).expanduser()
    if not p.is_file():
        raise ConfigError(f"compile.instruction_candidates: {p} not found")
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"compile.instruction_candidates: {p} cannot be read: {exc}") from exc
    try:
        raw = json.loads(text) if p.suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"compile.instruction_candidates: {p} is not valid {'JSON' if p.suffix == '.json' else 'YAML'}: {exc}") from exc
    if not isinstance(raw, dict):
        raise ConfigError(f"compile.instruction_candidates: {p} must map step names to lists of instructions")
    unknown = sorted(set(raw) - set(step_names))
    if unknown:
        raise ConfigError(f"compile.instruction_candidates: {p} names steps the program does not have: {', '.join(map(str, unknown))} "
                          f"(its steps: {', '.join(step_names)})")
    for step, texts in raw.items():
        if not isinstance(texts, list) or not texts or not all(isinstance(t, str) and t.strip() for t in texts):
            raise ConfigError(f"compile.instruction_candidates: {p}: {step!r} must be a non-empty list of non-empty strings")
    return {step: [t.strip() for t in texts] for step, texts in raw.items()}


class CandidateMIPROv2(dspy.MIPROv2):
    """``dspy.MIPROv2`` whose search sees the prompt model's candidates (guarded or not) and those of a file.

    It overrides MIPROv2's private ``_propose_instructions`` (DSPy 3.4's), the one place the candidates exist before the
    search starts; a test runs DSPy's own method under it, so an upgrade that renames or reshapes it fails there.

    Args:
        guard: Leave out the prompt model's candidates that are no instruction.
        candidates: ``compile.instruction_candidates`` as ``read_candidates`` gives it: more instructions per step name.
    """

    def __init__(self, *args, guard: bool = True, candidates: dict[str, list[str]] | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.guard, self.candidates = guard, candidates or {}

    def _propose_instructions(self, program, *args, **kwargs) -> dict[int, list[str]]:
        names = [name for name, _ in program.named_predictors()]
        try:
            candidates = super()._propose_instructions(program, *args, **kwargs)
        except ContextWindowExceededError as exc:
            # Measured: with the program's source in its prompt, the askfirst program's proposals asked the 1.5B for
            # about 10,000 tokens at n_ctx 8192. Said as one line, with what to change, not as a traceback.
            said = str(exc).strip().splitlines()[0]  # DSPy's own "To fix" list follows; what to change here is below
            raise ConfigError(f"MIPROv2's prompt model cannot hold what compile.proposer_context gives it ({said}). Leave "
                              "'program' (the program's source) or 'data' out of compile.proposer_context, or give "
                              "compile.reflection_lm a larger context (n_ctx for a local model).") from exc
        if self.guard:
            candidates = guarded(candidates, names)
        for i, name in enumerate(names):
            candidates[i] += [text for text in self.candidates.get(name, []) if text not in candidates[i]]
        return candidates
