"""The tasks of a run whose recorded standalone rewrite is an earlier user turn of their conversation: the only ones
``askfirst.rewrite_repeat_check`` can change. The run is an eval (its ``standalone_query``) or a ``tune-threshold --signal
top-cosine`` run (its ``query``) made with the check off; its saved config names the questions. Printed as a YAML list
for ``--set data.ids=…``, with each task's label, turn and rewrite on stderr (no LM).

    ASKFIRST_DATA_DIR=../shared/data python bench/repeated_turn_rewrites.py runs/threshold-…
    … askfirst ablate bench/grids/askfirst_rewrite_repeat_mtrag.yaml --set data.split=train --set data.limit=null \\
        --set "data.ids=$(python bench/repeated_turn_rewrites.py runs/threshold-…)"
"""

from __future__ import annotations

import sys
from pathlib import Path

from askfirst.config import load_config
from askfirst.datasets.jsonl import read_jsonl
from askfirst.datasets.splits import configured_questions
from askfirst.programs.askfirst.standalone import repeats_earlier_turn
from askfirst.programs.common.conversation import question_and_history


def recorded_rewrites(run: Path) -> dict[str, str]:
    """``{task id: the query it searched}`` from an eval's predictions or a gate tuning's rows."""
    if (run / "predictions.jsonl").is_file():
        return {r["id"]: (r.get("extras") or {}).get("standalone_query") or "" for _, r in read_jsonl(run / "predictions.jsonl")}
    return {r["id"]: r.get("query") or "" for _, r in read_jsonl(run / "gate_rows.jsonl")}


def main(run: str) -> None:
    config = load_config(Path(run) / "config.yaml")
    rewrites = recorded_rewrites(Path(run))
    picked = []
    for example in configured_questions(config, split="all"):  # a tuning run's --split is not in its config
        if example.id not in rewrites:
            continue
        # the question and history as the program reads them
        question, history, _ = question_and_history(example.conversation, config.program)
        if repeats_earlier_turn(question, rewrites[example.id], history):
            picked.append(example.id)
            print(f"{example.get('answerability')}: {question[:80]!r} -> {rewrites[example.id][:80]!r}", file=sys.stderr)
    print(f"{len(picked)} of {len(rewrites)} recorded tasks", file=sys.stderr)
    print("[" + ", ".join(picked) + "]")


if __name__ == "__main__":
    main(*sys.argv[1:])
