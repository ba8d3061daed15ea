"""Count LM calls through DSPy's callback hooks: every LM of a program, with no cap (LM.history is capped); and, given
the program's predictors, the tokens each step used."""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager

import dspy
from dspy.utils.callback import BaseCallback
from dspy.utils.usage_tracker import UsageTracker


class SharedUsageTracker(UsageTracker):
    """A usage tracker that DSPy's parallel executor shares instead of copying. It deep-copies the tracker into each
    worker thread, so the LM calls of an optimiser's evaluations (which run there) would count into copies that are
    thrown away, and a compile would report 0 tokens. Appending to its per-model lists is safe across threads."""

    def __deepcopy__(self, memo):
        return self


@contextmanager
def tracking_tokens() -> Iterator[SharedUsageTracker]:
    """Record the tokens of every LM call made in this context, in any thread it starts; read them with ``tracked_tokens``."""
    tracker = SharedUsageTracker()
    with dspy.context(track_usage=True, usage_tracker=tracker):
        yield tracker


def tracked_tokens() -> tuple[int, int]:
    """Input and output tokens DSPy's usage tracker has recorded so far in this context (0, 0 without one)."""
    tracker = dspy.settings.get("usage_tracker")
    if tracker is None:
        return 0, 0
    totals = tracker.get_total_tokens().values()
    return sum(u.get("prompt_tokens") or 0 for u in totals), sum(u.get("completion_tokens") or 0 for u in totals)


class LMCallCounter(BaseCallback):
    """Counts ``on_lm_start`` events (cache hits included: they are calls the program made), and with ``steps`` (a
    predictor's ``id`` → its name in the program) the tokens spent inside each step: the usage tracker's growth between
    the step's start and end. A cached call used no tokens."""

    def __init__(self, steps: dict[int, str] | None = None):
        self.count = 0
        self.steps = steps or {}
        self.tokens_by_step: dict[str, dict[str, int]] = defaultdict(lambda: {"in": 0, "out": 0})
        self._open: dict[str, tuple[str, tuple[int, int]]] = {}
        self._lock = threading.Lock()

    def on_lm_start(self, call_id, instance, inputs):
        with self._lock:
            self.count += 1

    def on_module_start(self, call_id, instance, inputs):
        name = self.steps.get(id(instance))
        if name is not None:
            self._open[call_id] = (name, tracked_tokens())

    def on_module_end(self, call_id, outputs, exception):
        if call_id in self._open:
            name, (tokens_in, tokens_out) = self._open.pop(call_id)
            now_in, now_out = tracked_tokens()
            with self._lock:
                self.tokens_by_step[name]["in"] += now_in - tokens_in
                self.tokens_by_step[name]["out"] += now_out - tokens_out


@contextmanager
def counting_lm_calls(program: dspy.Module | None = None) -> Iterator[LMCallCounter]:
    """Count LM calls made in this context; with ``program``, also the tokens of each of its predictors."""
    steps = {id(p): name for name, p in program.named_predictors()} if program is not None else None
    counter = LMCallCounter(steps)
    with dspy.context(callbacks=[*dspy.settings.get("callbacks", []), counter]):
        yield counter
