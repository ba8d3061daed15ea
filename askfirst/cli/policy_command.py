"""``askfirst policy``: cross-validate, fit and score the askfirst program's route policy on recorded signals (no LM)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from askfirst.cli.options import ConfigOpt, SetOpt, resolve

policy_app = typer.Typer(no_args_is_help=True, help="The askfirst program's route policy, fitted on the signals an eval run with "
                                                    "askfirst.policy=fitted recorded (no LM calls).")

RunsArg = Annotated[list[Path], typer.Argument(help="Eval run folders whose questions recorded signals (askfirst.policy=fitted), "
                                                    "or signals tables (askfirst policy export).")]
COption = Annotated[float | None, typer.Option("--C", help="The logistic regression's inverse regularisation strength, with "
                                                             "--signals and --weights; default: all three chosen by inner folds "
                                                             "of the training questions only.")]
SignalsOption = Annotated[str, typer.Option("--signals", help="With --C: 'signals', 'signals+rules' (the rules' route as a signal "
                                                                   "too), or 'rules' (the rules' route alone, re-mapped).")]
WeightsOption = Annotated[str, typer.Option("--weights", help="With --C: 'balanced' (each route weighs alike) or 'natural' (each question does).")]
PlotOption = Annotated[Path | None, typer.Option("--plot", help="Also draw per-route accuracy, beside the rules', as an SVG here.")]
SelectOption = Annotated[str, typer.Option("--select-by", help="What the inner folds maximise when choosing: 'route' accuracy or "
                                                                 "'macro' (the mean of per-route accuracies).")]


def _settings(C: float | None, signals: str, weights: str):
    from askfirst.programs.askfirst.policy import CLASS_WEIGHTS
    from askfirst.programs.askfirst.signals import SIGNAL_SETS

    if signals not in SIGNAL_SETS:
        raise typer.BadParameter(f"--signals is one of {', '.join(SIGNAL_SETS)}")
    if weights not in CLASS_WEIGHTS:
        raise typer.BadParameter(f"--weights is one of {', '.join(CLASS_WEIGHTS)}")
    return None if C is None else (C, signals, weights)


def _select_by(select_by: str) -> str:
    from askfirst.evaluation.policy_cv import SELECT_BY

    if select_by not in SELECT_BY:
        raise typer.BadParameter(f"--select-by is one of {', '.join(SELECT_BY)}")
    return select_by


def _rows(runs: list[Path]) -> list[dict]:
    """The questions of every run or table, pooled: a conversation in two of them (chunks of one question set) is one
    conversation, so cross-validation keeps it in one fold."""
    from askfirst.datasets.errors import DataError
    from askfirst.evaluation.policy_cv import policy_questions

    rows, seen = [], {}
    for run in runs:
        for row in policy_questions(run):
            if row["id"] in seen:
                raise DataError(f"question {row['id']} is in both {seen[row['id']]} and {run}")
            seen[row["id"]] = run
            rows.append(row)
    return rows


def _print_comparison(result: dict, *, title: str, first: str = "fitted") -> None:
    from rich.table import Table

    from askfirst.cli.render import console

    table = Table(title=title)
    for column in ("expected route", "n", f"{first} right", "rules right"):
        table.add_column(column)
    for route, n in result["expected"].items():
        def cell(name: str) -> str:
            row = result[name]["per_route"].get(route)
            return f"{row['share']:.2f} [{row['ci95'][0]:.2f}, {row['ci95'][1]:.2f}]" if row else "-"
        table.add_row(route, str(n), cell(first), cell("rules"))
    table.add_row("route accuracy", str(result["n"]), f"{result[first]['route_accuracy']:.3f}", f"{result['rules']['route_accuracy']:.3f}")
    table.add_row("macro accuracy", "", f"{result[first]['macro_accuracy']:.3f}", f"{result['rules']['macro_accuracy']:.3f}")
    console.print(table)
    d = result["difference"]
    console.print(f"{first} - rules, route accuracy: {d['route_accuracy']:+.3f} [{d['ci95'][0]:+.3f}, {d['ci95'][1]:+.3f}] (paired bootstrap)")
    if result.get("calibration"):
        c = result["calibration"]
        console.print(f"{first} probabilities: Brier {c['brier']:.3f}, log loss {c['log_loss']:.3f}, ECE {c['ece']:.3f} "
                      f"(chosen route's mean probability {c['mean_confidence']:.2f}, right {result[first]['route_accuracy']:.2f}); "
                      f"its training route mix for every question: Brier {c['mix_brier']:.3f}, log loss {c['mix_log_loss']:.3f}")


@policy_app.command("cv")
def cv(runs: RunsArg, folds: Annotated[int, typer.Option(help="Folds of conversations.")] = 5,
       seed: Annotated[int, typer.Option(help="Shuffles the conversations into folds.")] = 0, C: COption = None,
       signals: SignalsOption = "signals", weights: WeightsOption = "balanced", select_by: SelectOption = "route",
       out: Annotated[Path | None, typer.Option(help="Write the report (every held-out route too) as JSON here.")] = None,
       plot: PlotOption = None,
       by: Annotated[str, typer.Option("--by", help="Hold out folds of 'conversation's, or one 'collection' at a time "
                                                    "(how the policy does on a collection it never saw; --folds unused).")] = "conversation") -> None:
    """K-fold cross-validation by conversation (or by collection): a policy fitted on the other folds routes the fold it
    never saw, beside the rules' routes on the same signals."""
    from askfirst.cli.render import console
    from askfirst.evaluation.policy_cv import FOLDS_BY, cross_validate

    if by not in FOLDS_BY:
        raise typer.BadParameter(f"--by is one of {', '.join(FOLDS_BY)}")
    result = cross_validate(_rows(runs), folds=folds, seed=seed, settings=_settings(C, signals, weights), select_by=_select_by(select_by), by=by)
    title = (f"held-out routes, {result['folds']} folds by {by} "
             f"({result['conversations']} conversations{', each collection held out once' if by == 'collection' else ''})")
    _print_comparison(result, title=title)
    for name, row in (result.get("per_collection") or {}).items():
        console.print(f"  {name} held out ({row['n']} questions): fitted {row['fitted']:.3f}, rules {row['rules']:.3f}")
    if plot:
        from askfirst.evaluation.route_plot import plot_route_accuracy

        plot_route_accuracy(result, plot, first="fitted", title=title)
    if out:
        out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


@policy_app.command("fit")
def fit(runs: RunsArg, out: Annotated[Path, typer.Option(help="Folder to write program.json to (a compiled program, for program.compiled).")],
        program: Annotated[Path | None, typer.Option(help="A compiled program whose prompts and demos to keep beside the policy.")] = None,
        C: COption = None, signals: SignalsOption = "signals", weights: WeightsOption = "balanced",
        select_by: SelectOption = "route") -> None:
    """Fit the route policy on every question of the runs and write it as a compiled program (plain JSON)."""
    from askfirst.cli.render import console
    from askfirst.optimizers.compile import PROGRAM_FILE, program_state_path
    from askfirst.evaluation.policy_cv import fit_rows
    from askfirst.programs.askfirst.policy import POLICY_KEY
    from askfirst.run_dir import write_atomic

    rows = _rows(runs)
    policy = fit_rows(rows, settings=_settings(C, signals, weights), select_by=_select_by(select_by))
    state = json.loads(program_state_path(program).read_text(encoding="utf-8")) if program else {}
    state[POLICY_KEY] = policy.to_json()
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / PROGRAM_FILE, json.dumps(state, indent=2) + "\n")
    console.print(f"fitted on {len(rows)} questions {policy.fitted_on} (C {policy.C}, {policy.class_weight} weights, temperature {policy.temperature:.2f}, "
                  f"{len(policy.features)} signals); wrote {out / PROGRAM_FILE} (use it with --set program.compiled={out} --set askfirst.policy=fitted)")
    for route, coefficients in policy.weights().items():
        top = sorted(coefficients.items(), key=lambda kv: -abs(kv[1]))[:5]
        console.print(f"  {route}: " + ", ".join(f"{name} {w:+.2f}" for name, w in top))


@policy_app.command("score")
def score(program: Annotated[Path, typer.Argument(help="A compiled program holding a route policy (run folder or program.json).")],
          runs: RunsArg, plot: PlotOption = None) -> None:
    """Route the runs' questions by a fitted policy, unchanged (a transfer set), beside the rules' routes on the same signals."""
    from askfirst.datasets.errors import DataError
    from askfirst.evaluation.policy_cv import compare_routes
    from askfirst.optimizers.compile import program_state_path
    from askfirst.programs.askfirst.policy import POLICY_KEY, RoutePolicy

    state = json.loads(program_state_path(program).read_text(encoding="utf-8"))
    if POLICY_KEY not in state:
        raise DataError(f"{program}: holds no route policy (askfirst policy fit writes one)")
    policy = RoutePolicy.from_json(state[POLICY_KEY], where=str(program))
    result, title = compare_routes(_rows(runs), policy), f"routes by {program}, unchanged"
    _print_comparison(result, title=title, first="policy")
    if plot:
        from askfirst.evaluation.route_plot import plot_route_accuracy

        plot_route_accuracy(result, plot, first="policy", title=title)


@policy_app.command("export")
def export(runs: RunsArg, out: Annotated[Path, typer.Option(help="The signals table to write (JSON).")],
           source: Annotated[str, typer.Option(help="What the runs were recorded with, in words (config, commit, LM).")] = "") -> None:
    """Write the runs' questions and their signals as one signals table: what cv, fit and score read, without the
    passages, answers or prompts, so a fit can be reproduced and pooled without the LM pass that recorded it."""
    from askfirst.cli.render import console
    from askfirst.evaluation.signals_table import write_signals_table

    table = write_signals_table(_rows(runs), out, source=source)
    console.print(f"wrote {len(table.rows)} questions' signals to {out}")


@policy_app.command("rescale")
def rescale(tables: Annotated[list[Path], typer.Argument(help="Signals tables (askfirst policy export) to update in place.")],
            config: ConfigOpt = None, overrides: SetOpt = None) -> None:
    """Read each table's recorded top cosines again on the scale of the config's index (its top_cosine_percentile, as
    the program computes it now), without an LM pass; the index must be built."""
    from askfirst.cli.render import console
    from askfirst.evaluation.signals_table import read_table, rescaled_rows, write_signals_table
    from askfirst.retrieval.embedder import embedder_for
    from askfirst.retrieval.factory import open_store

    resolved = resolve(config, overrides)
    read = {table: read_table(table) for table in tables}  # every table checked before any is written
    store = open_store(resolved)
    try:
        embedder = embedder_for(resolved.retriever)
        for table, content in read.items():
            rows = [row.model_dump() for row in content.rows]
            source = content.source.split("; top_cosine_percentile")[0]
            note = f"; top_cosine_percentile read by `askfirst policy rescale` on the index of {config or 'the default config'}"
            write_signals_table(rescaled_rows(rows, store, embedder), table, source=source[: 2000 - len(note)] + note)  # the schema's limit
            console.print(f"{table}: {len(rows)} questions' top_cosine_percentile read on the index's scale")
    finally:
        store.close()


@policy_app.command("separation")
def separation_command(runs: RunsArg, top: Annotated[int, typer.Option(help="Show this many signals, strongest first (0: all).")] = 0,
                       out: Annotated[Path | None, typer.Option(help="Write every signal's AUCs and intervals as JSON here.")] = None,
                       collection: Annotated[str | None, typer.Option(help="Only the questions of this collection.")] = None) -> None:
    """Each signal's one-vs-rest ROC AUC per expected route (0.5: no separation), with 95% bootstrap intervals: which
    signals a policy can use, measured on the questions given (use training questions to choose signals)."""
    from rich.table import Table

    from askfirst.cli.render import console
    from askfirst.datasets.errors import DataError
    from askfirst.evaluation.signal_separation import separation

    rows = _rows(runs)
    if collection is not None:
        named = sorted({r["collection"] for r in rows})
        rows = [r for r in rows if r["collection"] == collection]
        if not rows:
            raise DataError(f"no question of collection {collection!r}; the questions' collections: {', '.join(map(repr, named))}")
    result = separation(rows)
    table = Table(title=f"one-vs-rest AUC of each signal ({result['n']} questions{f' of {collection}' if collection else ''}: "
                        + ", ".join(f"{route} {n}" for route, n in result["expected"].items()) + ")")
    table.add_column("signal")
    for route in result["expected"]:
        table.add_column(route)
    for row in result["signals"][:top or None]:
        table.add_row(row["signal"], *(f"{v['auc']:.2f} " + (f"[{v['ci95'][0]:.2f}, {v['ci95'][1]:.2f}]" if v["ci95"] else "[no interval]")
                                       for v in row["auc"].values()))
    console.print(table)
    if any(v["ci95"] is None for row in result["signals"] for v in row["auc"].values()):
        console.print("[no interval]: a route so rare that some resamples hold none of its questions, where its AUC is undefined")
    if out:
        out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
