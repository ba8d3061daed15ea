"""Stopping a request's work when nobody waits for it any more (a client that disconnected, a server shutting down).

The server puts a :class:`threading.Event` into DSPy's settings for the request (``dspy.context(askfirst_cancel=…)``);
DSPy carries its settings into the threads of ``dspy.Parallel``, so every step of every program sees it. Each
program step checks it before calling its LM (``call_predictor``), and the llama.cpp engine checks it while it
waits for its lock and after each call, so a cancelled request stops at its next LM call at the latest.
"""

from __future__ import annotations

import threading

import dspy

SETTING = "askfirst_cancel"


class Cancelled(Exception):  # noqa: N818 - the usual name for this
    """The request this work belongs to was cancelled."""


def cancel_event() -> threading.Event | None:
    """The current request's cancel event, if it has one."""
    return dspy.settings.get(SETTING)


def is_cancelled() -> bool:
    event = cancel_event()
    return event is not None and event.is_set()


def check_cancelled() -> None:
    """Raise :class:`Cancelled` when the current request was cancelled."""
    if is_cancelled():
        raise Cancelled("the request was cancelled (client disconnected or server shutting down)")


def acquire(lock: threading.Lock, *, poll: float = 0.1) -> None:
    """Acquire ``lock``, giving up with :class:`Cancelled` if the request is cancelled while it waits."""
    while not lock.acquire(timeout=poll):
        check_cancelled()
