"""What the clarifications of finished eval runs offer, read from their replies (no LM): how many offer a sentence or the
user's own words as an option (``not_readings``), how many ask a question of their own beside two options or more
(``asks_which`` false), how many offer no option at all (the lead alone, or the request for a detail), and how many
offer the titled documents of the kind the question leaves unnamed in place of the responder's options
(``titled_options``). Each clarification that has one of the first two is printed with ``--list``.

    python bench/clarification_options.py [--list] runs/eval-… [runs/eval-… …]

Only the clarification responder's replies count: a divergence's options are documents' names, asked without it. The
whole reply is read, a lead included, so a lead that asks what the user means ('What do you mean by "this TV series"?')
counts as asking even when the responder's question after it asks something else.
"""

from __future__ import annotations

import sys
from pathlib import Path

from askfirst.datasets.jsonl import read_jsonl
from askfirst.programs.askfirst.divergence import UNSAID_CHOICE, asks_which, not_readings


def responder_clarifications(run: Path) -> list[dict]:
    """The run's clarifications written by the clarification responder (no divergence's options)."""
    return [r for _, r in read_jsonl(run / "predictions.jsonl")
            if r["route"] == "clarify" and not ((r.get("extras") or {}).get("ambiguity") or {}).get("options")]


def main(argv: list[str]) -> None:
    listing = "--list" in argv
    print("| run | clarifications | a sentence or the user's words offered | no choice asked | no option offered | titled documents offered |")
    print("|---|---|---|---|---|---|")
    for folder in (a for a in argv if a != "--list"):
        rows = responder_clarifications(Path(folder))
        unnamed = [r for r in rows if not_readings(r["options"], r["question"])]
        no_choice = [r for r in rows if len(r["options"]) >= 2 and not asks_which(r["answer"], r["options"])]
        bare = [r for r in rows if len(r["options"]) < 2 or r["answer"].endswith(UNSAID_CHOICE)]
        titled = [r for r in rows if (r.get("extras") or {}).get("titled_options")]
        print(f"| {Path(folder).name} | {len(rows)} | {len(unnamed)} | {len(no_choice)} | {len(bare)} | {len(titled)} |")
        for r in (unnamed + no_choice) if listing else []:
            print(f"  {r['question'][:70]!r} -> {r['answer'][:110]!r}", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
