"""``askfirst report``: one eval run's finished questions, or two runs of the same questions compared (no LM calls)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from askfirst.cli.render import fmt

RunsArg = Annotated[list[str], typer.Argument(help="One run folder (a report), or two (a paired comparison, the first the "
                                                     "reference); each may be LABEL=folder[,folder…] to pool chunk runs.")]


def report(
    runs: RunsArg,
    misroutes: Annotated[bool, typer.Option(help='Also list ANSWERABLE tasks sent to "I don\'t know" and UNANSWERABLE ones answered.')] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the one run's report as JSON.")] = False,
    format_: Annotated[str, typer.Option("--format", help="The comparison table as md, csv or latex.")] = "md",
) -> None:
    """Report an eval run's finished questions (a stopped run too): per-route accuracy with 95% CIs, the route targets,
    P(answerable)'s calibration, what decided each "I don't know". With two runs, compare them question by question as
    ``askfirst ablate`` compares cells (paired bootstrap 95% CIs)."""
    if len(runs) == 1 and "=" not in runs[0] and "," not in runs[0]:
        _report(Path(runs[0]), misroutes=misroutes, as_json=as_json)
    elif len(runs) == 2:
        _compare(runs, format_)
    else:
        raise typer.BadParameter("give one run folder, or two runs (LABEL=folder[,folder…]) of the same questions to compare")


def _report(run_dir: Path, *, misroutes: bool, as_json: bool) -> None:
    from askfirst.evaluation.run_report import run_report

    r = run_report(run_dir)
    if as_json:
        typer.echo(json.dumps(r, indent=2))
        return
    if not r["finished"]:
        typer.echo(f"{run_dir}: no finished question", err=True)
        raise typer.Exit(2)
    s = r["summary"]
    lines = [f"{r['finished']} of {r['selected']} questions finished in {run_dir}\n", "| expected route | n | route accuracy [95% CI] | routes taken |",
             "|---|---|---|---|"]
    for route, row in s["per_route"].items():
        low, high = row["route_accuracy_ci95"]
        taken = ", ".join(f"{k} {v}" for k, v in sorted(s["confusion"][route].items(), key=lambda kv: -kv[1]))
        lines.append(f"| {route} | {row['n']} | {row['route_accuracy']:.3f} [{low:.2f}, {high:.2f}] | {taken} |")
    lines.append(f"\nroute accuracy {s['route_correct']:.3f}, outcome {s['outcome_correct']:.3f}; "
                 f"Recall@10 {s.get('ranking_recall@10') or float('nan'):.4f}, nDCG@5 {s.get('ranking_ndcg@5') or float('nan'):.4f} "
                 f"(tasks with qrels); {s['seconds_per_question']:.1f} s and {s['lm_calls_per_question']:.2f} LM calls per question\n")
    lines += [f"- {label}: {row['share']:.3f} of {row['n']} [{row['ci95'][0]:.2f}, {row['ci95'][1]:.2f}]" for label, row in r["rates"].items()]
    if s.get("answerability_n"):
        auc = s["answerability_auc"]
        lines.append(f"- P(answerable) on the {s['answerability_n']} assessed questions ({s['answerability_share']:.3f} answerable, mean P "
                     f"{s['mean_p_answerable']:.3f}): AUC {'n/a' if auc is None else f'{auc:.3f}'}, Brier {s['answerability_brier']:.3f}, "
                     f"ECE {s['answerability_ece']:.3f}; mean P by expected route: "
                     + ", ".join(f"{route} {p:.3f}" for route, p in r["mean_p_answerable_by_route"].items()))
    if r["idk_sources"]:
        lines.append('- "I don\'t know" by what decided it, per expected route: ' + "; ".join(
            f"{route}: " + ", ".join(f"{source} {n}" for source, n in sorted(c.items(), key=lambda kv: -kv[1]))
            for route, c in sorted(r["idk_sources"].items())))
    if misroutes:
        lines.append("\n| task | expected | taken | decided by | top cosine | Recall@10 | P(answerable) |\n|---|---|---|---|---|---|---|")
        lines += [f"| {m['id']} | {m['expected']} | {m['taken']} | {m['decided_by'] or '-'} | {fmt(m['top_cosine'])} | "
                  f"{fmt(m['recall@10'])} | {fmt(m['p_answerable'])} |" for m in r["misroutes"]]
    typer.echo("\n".join(lines))


def _compare(runs: list[str], format_: str) -> None:
    from askfirst.ablation import Cell, CellResult, compare, compared_keys
    from askfirst.evaluation.pooled_runs import paired_runs
    from askfirst.table_export import FORMATS, comparison_table, render

    if format_ not in FORMATS:
        raise typer.BadParameter(f"--format must be one of {', '.join(FORMATS)}")
    labelled = [run if "=" in run else f"{Path(run.split(',')[0]).name}={run}" for run in runs]
    try:
        sides = paired_runs(labelled)
    except ValueError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    k_ref, k_other = (run.config.program.evidence_k for _, run in sides)
    if k_ref != k_other:
        typer.echo(f"error: the runs differ in their evidence size: evidence_k {k_ref} vs {k_other}", err=True)
        raise typer.Exit(2)
    ref, other = (CellResult(Cell(label, []), run.scores, run.summary) for label, run in sides)
    sys.stdout.write(render(*comparison_table(compare([ref, other], ref.cell.name, keys=compared_keys(k_ref), seed=0)), format_))
