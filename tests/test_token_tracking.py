"""A compile's token count: its optimiser evaluates in DSPy's worker threads, which deep-copy the usage tracker."""

import dspy
from dspy.utils.parallelizer import ParallelExecutor
from dspy.utils.usage_tracker import UsageTracker

from askfirst.lm.call_counter import tracked_tokens, tracking_tokens


def _spend(_):
    dspy.settings.usage_tracker.add_usage("local/m", {"prompt_tokens": 30, "completion_tokens": 4})


def test_tokens_spent_in_dspys_worker_threads_are_counted():
    with tracking_tokens():
        ParallelExecutor(num_threads=3, disable_progress_bar=True).execute(_spend, list(range(5)))
        _spend(None)  # and in this thread
        assert tracked_tokens() == (180, 24)
    with dspy.context(track_usage=True, usage_tracker=UsageTracker()):  # DSPy's own tracker: each worker gets a copy
        ParallelExecutor(num_threads=3, disable_progress_bar=True).execute(_spend, list(range(5)))
        assert tracked_tokens() == (0, 0)
