"""Count LM calls through DSPy's callback hooks: every LM of a program, with no cap (LM.history is capped)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import dspy
from dspy.utils.callback import BaseCallback


class LMCallCounter(BaseCallback):
    """Counts ``on_lm_start`` events (cache hits included: they are calls the program made)."""

    def __init__(self):
        self.count = 0
        self._lock = threading.Lock()

    def on_lm_start(self, call_id, instance, inputs):
        with self._lock:
            self.count += 1


@contextmanager
def counting_lm_calls() -> Iterator[LMCallCounter]:
    counter = LMCallCounter()
    with dspy.context(callbacks=[*dspy.settings.get("callbacks", []), counter]):
        yield counter
