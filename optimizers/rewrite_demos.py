"""Demonstrations for the standalone rewrite, drawn from human rewrites of other conversations (MTRAG's human set).

The offline 0.5B rewriter leaves follow-ups such as "How does it work?" as they are, and its compiled instructions or
bootstrapped demos came from the 1.5B's own poor outputs (the results log (bench/RESULTS.md in git history)). A labelled rewrite is what a
demonstration of this step should show, and MTRAG's annotators wrote one for each turn of 110 conversations that
MTRAG-UN does not have.
"""

from __future__ import annotations

import logging
import random
from collections import defaultdict

import dspy

from askfirst.config import ConfigError
from askfirst.datasets.errors import DataError
from askfirst.datasets.mtrag import load_mtrag_rewrites
from askfirst.datasets.shared_data import shared_data_dir
from askfirst.evaluation.retrieval_metrics import recall_at_k, unique_in_order
from askfirst.optimizers.demo_selection import interleaved
from askfirst.optimizers.feedback_metrics import RecallMetric
from askfirst.programs.base import probe
from askfirst.programs.common.conversation import question_and_history

logger = logging.getLogger(__name__)

# A demonstration's prompt share stays small: the rewrite runs on the 0.5B with the conversation of every task.
MAX_HISTORY_CHARS = 400


def drawn_rewrite_demos(pool: list[dspy.Example], *, k: int, seed: int) -> list[dspy.Example]:
    """``k`` labelled rewrites from ``pool`` (``load_mtrag_rewrites``), seeded: only rewrites that change their turn, of
    a history up to ``MAX_HISTORY_CHARS``, taken from each collection in turn so the demos span the domains.

    Returns:
        Examples with exactly the rewrite Signature's fields, as a compiled program's demos are saved.
    """
    by_collection: dict[str, list[dspy.Example]] = defaultdict(list)
    for example in pool:
        if example.changed and len(example.conversation_history) <= MAX_HISTORY_CHARS:
            by_collection[example.collection].append(example)
    rng = random.Random(seed)
    shuffled = []
    for name in sorted(by_collection):
        rng.shuffle(by_collection[name])
        shuffled += reversed(by_collection[name])  # read from its end: the order the shipped draw was made in
    drawn = interleaved(shuffled, key=lambda example: example.collection)[:k]
    return [dspy.Example(conversation_history=e.conversation_history, question=e.question, standalone_question=e.standalone_question)
            for e in drawn]


def scored_follow_ups(examples: list[dspy.Example], *, unanswerable: bool = False) -> list[dspy.Example]:
    """The examples whose last turn follows earlier ones and that have judged passages (qrels, else gold passages, as
    the recall objective reads them): the tasks a rewrite's search is scored on; with ``unanswerable``, the UNANSWERABLE
    follow-ups without them too (``gated_recall`` scores whether the gate stops them)."""
    return [e for e in examples if len(e.conversation) > 1
            and (RecallMetric.relevant(e) or (unanswerable and e.get("answerability") == "UNANSWERABLE"))]


def rewrite_rankings(program, tasks: list[dspy.Example], *, k: int = 10, rewrite: bool = True) -> list[dict]:
    """Per task, the query the askfirst ``program`` searches (its rewrite with every check; the last turn as written without
    ``rewrite``) and the document ids of its simple stage's one hybrid search, ``k`` deep. Only the rewrite step's LM runs.

    Returns:
        ``[{"id", "query", "ranked", "top_cosine", "gated"}]`` in the order of ``tasks``: the retrieval gate's signal for
        the query (``None`` without a dense index) and whether the program's gate turns it away.
    """
    rows = []
    for task in tasks:
        question, history, _ = question_and_history(task.conversation, program.program_config)
        found = probe(program, "retrieval", question, history, rewrite=rewrite)
        rows.append({"id": task.id, **found, "ranked": unique_in_order([p.doc_id for p in program.resources.search([found["query"]], k)])})
    return rows


def gated_recall(row: dict, task: dspy.Example, *, through_gate: bool, k: int = 10) -> float:
    """A follow-up's ``compile.objective=gated_recall`` score from its ``rewrite_rankings`` row: with judged passages, its
    Recall@``k`` unless the gate stops the query (0: the program says "I don't know"); without (an UNANSWERABLE
    follow-up), 1 if the gate stops it, which is the right reply, else 0. Not ``through_gate``, it is plain recall."""
    relevant = RecallMetric.relevant(task)
    stopped = through_gate and row["gated"]
    if not relevant:
        return float(stopped)
    return 0.0 if stopped else recall_at_k(row["ranked"], relevant, k)


class RewriteDemoSearch:
    """Random search over draws of labelled rewrite demonstrations for the askfirst program's ``rewrite`` step.

    Candidate 0 is the program as it is (its rewrite's own demos, none uncompiled); candidates 1 to ``draws`` are
    ``drawn_rewrite_demos`` with seeds ``seed + 1`` on. Each is scored by the Recall@``recall_k`` of its rewrite's one
    hybrid search over the trainset's follow-ups with qrels (only the rewrite step's LM runs, so a draw costs a few
    minutes, not a whole program run), and the best is kept; a tie keeps the earlier, so the seed stands unless a draw
    beats it. The kept candidate and the seed are then scored on the valset's follow-ups, for the curve only.
    Instructions are never changed.

    Args:
        pool: Labelled rewrites (``load_mtrag_rewrites``).
        k: Demonstrations per draw.
        through_gate: Score through the program's retrieval gate (``compile.objective=gated_recall``): a follow-up whose
            query it turns away scores 0 recall (the program says "I don't know"), and UNANSWERABLE follow-ups are scored
            too, 1 if it turns them away. Off: plain recall.
    """

    def __init__(self, *, pool: list[dspy.Example], k: int, draws: int, seed: int = 0, recall_k: int = 10, through_gate: bool = False):
        self.pool, self.k, self.draws, self.seed, self.recall_k, self.through_gate = pool, k, draws, seed, recall_k, through_gate

    @property
    def score_name(self) -> str:
        return f"{'gated ' if self.through_gate else ''}recall@{self.recall_k}"

    def mean_score(self, program, tasks: list[dspy.Example]) -> float:
        rows = rewrite_rankings(program, tasks, k=self.recall_k)
        return sum(gated_recall(row, task, through_gate=self.through_gate, k=self.recall_k) for row, task in zip(rows, tasks)) / len(tasks)

    def compile(self, program, *, trainset: list, valset: list):
        """``program``'s copy with the best candidate's demos on its rewrite step, and ``search_curve`` (one row per
        candidate on the trainset, then the seed and the kept one on the valset).

        Raises:
            DataError: The trainset has no follow-up with qrels to score a rewrite on.
        """
        gated = self.through_gate
        train, val = scored_follow_ups(trainset, unanswerable=gated), scored_follow_ups(valset, unanswerable=gated)
        if not train:
            raise DataError(f"none of the {len(trainset)} trainset questions is a follow-up with qrels: nothing to score a rewrite's search on")
        logger.info("rewrite demos: scoring on %d trainset and %d valset follow-ups%s", len(train), len(val),
                    f" (UNANSWERABLE ones included) through the retrieval gate at {program.config.min_top_cosine}" if gated else " with qrels")
        student = program.deepcopy()
        candidates = [list(student.rewrite.demos)] + [drawn_rewrite_demos(self.pool, k=self.k, seed=self.seed + i) for i in range(1, self.draws + 1)]
        curve, best, best_score = [], 0, float("-inf")
        for step, demos in enumerate(candidates):
            student.rewrite.demos = demos
            score = self.mean_score(student, train)
            if score > best_score:
                best, best_score = step, score
            curve.append({"step": step, "metric_calls": len(train) * (step + 1), "score": score, "full_eval": False,
                          "demos": len(demos), "scored_on": "trainset"})
            logger.info("rewrite demos: candidate %d of %d (%d demos), trainset %s %.3f", step, len(candidates) - 1, len(demos),
                        self.score_name, score)
        for step, which in ((len(candidates), 0), (len(candidates) + 1, best)) if val else ():
            student.rewrite.demos = candidates[which]
            curve.append({"step": step, "metric_calls": len(train) * len(candidates) + len(val) * (step - len(candidates) + 1),
                          "score": self.mean_score(student, val), "full_eval": True, "demos": len(candidates[which]),
                          "scored_on": "valset", "candidate": which})
            logger.info("rewrite demos: candidate %d, valset %s %.3f", which, self.score_name, curve[-1]["score"])
        student.rewrite.demos = candidates[best]
        student.search_curve = curve
        return student


def rewrite_demo_search(config, program) -> RewriteDemoSearch:
    """The search ``compile.optimizer=rewrite_demos`` runs on ``program``, from the config's ``compile`` section: draws of
    ``max_demos`` demonstrations, ``num_candidates`` of them (default 4), scored by ``recall_k``.

    Raises:
        ConfigError: The objective is not ``recall`` or ``gated_recall`` (which needs ``askfirst.min_top_cosine``),
            ``max_demos`` is 0, or the program has no rewrite step.
        DataError: The shared data has no MTRAG human rewrites.
    """
    cfg = config.compile
    if cfg.objective not in ("recall", "gated_recall"):
        raise ConfigError("compile.optimizer=rewrite_demos scores the rewrite's search by recall: it needs compile.objective=recall or "
                          f"gated_recall, not {cfg.objective}")
    if cfg.max_demos < 1:
        raise ConfigError("compile.optimizer=rewrite_demos adds demonstrations only: compile.max_demos must be at least 1")
    if getattr(program, "rewrite", None) is None:
        raise ConfigError("compile.optimizer=rewrite_demos compiles the standalone rewrite: it needs program.kind=askfirst with askfirst.standalone on")
    through_gate = cfg.objective == "gated_recall"
    if through_gate and program.config.min_top_cosine is None:
        raise ConfigError("compile.objective=gated_recall scores the rewrite through the retrieval gate: set askfirst.min_top_cosine")
    pool = load_mtrag_rewrites(shared_data_dir(config.data.shared_data_dir))
    return RewriteDemoSearch(pool=pool, k=cfg.max_demos, draws=cfg.num_candidates or 4, seed=config.seed, recall_k=cfg.recall_k, through_gate=through_gate)
