"""The ``askfirst`` command line: config, index, ask, eval."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Annotated

import typer

from askfirst.cli.compile_command import compile_
from askfirst.cli.errors import USER_ERRORS
from askfirst.cli.options import ConfigOpt, SetOpt, data_overrides, resolve

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False, help="askfirst: answer, partially answer, ask to clarify, or say 'I don't know' - with citations.")


@app.command("config")
def show_config(config: ConfigOpt = None, set_: SetOpt = None) -> None:
    """Print the resolved configuration (defaults + file + overrides) as YAML."""
    typer.echo(resolve(config, set_).to_yaml())


@app.command()
def index(
    config: ConfigOpt = None, set_: SetOpt = None,
    corpus: Annotated[str | None, typer.Option(help="JSONL file or folder of .txt/.md files (default: data.corpus).")] = None,
    prune: Annotated[bool, typer.Option(help="Also delete indexed passages no longer in the corpus.")] = False,
    augment: Annotated[bool, typer.Option(help="Also build URASys's two-phase index (chunk-and-title units, FAQ collection) with the LM.")] = False,
) -> None:
    """Build or update the index of a corpus (incremental; an interrupted build resumes)."""
    from askfirst.cli.render import console
    from askfirst.datasets.corpus import load_corpus
    from askfirst.retrieval.factory import collection_name, index_corpus, open_store

    cfg = resolve(config, set_, [f"data.corpus={corpus}"] if corpus else [])
    docs = load_corpus(cfg.data.corpus, data_dir=cfg.data.shared_data_dir)  # read (and reject bad input) before opening the store or loading a model
    if augment:
        from askfirst.lm.factory import configure_dspy

        configure_dspy(cfg)  # a missing model fails here, before any index work
    store = open_store(cfg)
    try:
        report = index_corpus(cfg, store, docs=docs, prune=prune, progress=lambda done, todo: console.print(f"  embedded {done}/{todo}"))
        console.print(f"collection {collection_name(cfg)!r}: {report.passages} passages from the corpus; {report.added} added, "
                      f"{report.updated} updated, {report.unchanged} unchanged, {report.removed} removed in {report.seconds:.1f}s")
        if augment:
            from askfirst.augment import augment_index

            out = augment_index(cfg, store, docs=docs, progress=lambda done, total, uid: console.print(f"  chunk {done}/{total}: {uid}"))
            r = out.report
            console.print(f"URASys index: {r.chunks} chunks ({r.processed} through the LM, {r.reused} from the ledger, {r.failed} failed "
                          f"and kept raw), {r.faqs} FAQ entries; {out.lm_calls} LM calls, {r.seconds / 60:.1f} min; "
                          f"{out.units.added + out.units.updated} units and {out.faqs.added + out.faqs.updated} FAQ entries embedded")
    finally:
        store.close()


def _read_conversation(path: Path) -> list[dict]:
    from askfirst.datasets.errors import DataError

    if not path.is_file():
        raise DataError(f"conversation file not found: {path}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}:{exc.lineno}: malformed JSON ({exc.msg})") from None
    turns = data.get("turns", data.get("messages")) if isinstance(data, dict) else data
    if not isinstance(turns, list):
        raise DataError(f"{path}: expected a list of {{role, content}} turns (or an object with 'turns')")
    return turns


@app.command()
def ask(
    question: Annotated[str | None, typer.Argument(help="The question (omit when giving --conversation).")] = None,
    conversation: Annotated[Path | None, typer.Option(help="JSON file: a list of {role, content} turns ending with the user's question.")] = None,
    config: ConfigOpt = None, set_: SetOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the full record as JSON.")] = False,
) -> None:
    """Answer one question (or the last turn of a conversation), printing the route, the answer and its citations."""
    from askfirst.cli.render import print_reply
    from askfirst.evaluate import prediction_record
    from askfirst.programs.conversation import ConversationError, to_turns
    from askfirst.session import open_session

    if (question is None) == (conversation is None):
        raise ConversationError("give either a question or --conversation FILE")
    turns = _read_conversation(conversation) if conversation else [{"role": "user", "content": question}]
    to_turns(turns)  # validates before any model or index is loaded
    session = open_session(resolve(config, set_))
    try:
        import time

        import dspy

        from askfirst.lm.call_counter import counting_lm_calls

        start = time.perf_counter()
        with counting_lm_calls() as counter:
            pred = session.program(conversation=turns)
        record = prediction_record(dspy.Example(id="ask", conversation=turns), pred, seconds=time.perf_counter() - start,
                                   lm_calls=counter.count)
    finally:
        session.close()
    if as_json:
        typer.echo(json.dumps(record, indent=2, ensure_ascii=False))
    else:
        print_reply(record, {p.passage_id: p.text for p in pred.evidence})


@app.command("eval")
def evaluate(
    config: ConfigOpt = None, set_: SetOpt = None,
    questions: Annotated[str | None, typer.Option(help="Question-set JSONL (default: data.questions).")] = None,
    limit: Annotated[int | None, typer.Option(help="Only the first N questions.")] = None,
    resume: Annotated[Path | None, typer.Option(help="A run folder to finish: its saved config is reused and answered questions are skipped.")] = None,
    program: Annotated[Path | None, typer.Option(help="Compiled program: a compile run folder or its program.json (state JSON).")] = None,
) -> None:
    """Index the corpus if needed, run the program over a question set, print and log the metrics."""
    from askfirst.cli.render import console, print_summary
    from askfirst.config import load_config
    from askfirst.datasets.splits import configured_questions
    from askfirst.evaluate import run_eval
    from askfirst.run_dir import new_run_dir
    from askfirst.session import open_session
    from askfirst.tracking import tracked_run

    extra = data_overrides(questions, limit)
    if resume:
        cfg, run_dir = load_config(resume / "config.yaml"), resume
    else:
        cfg = resolve(config, set_, extra)
        run_dir = None
    examples = configured_questions(cfg)
    if program:
        from askfirst.optimizers.compile import program_state_path

        program_state_path(program)  # a bad path fails here, before models load
    run_dir = run_dir or new_run_dir(cfg, "eval")
    console.print(f"run folder: {run_dir}")
    session = open_session(cfg, progress=lambda done, todo: console.print(f"  indexing: embedded {done}/{todo}"))
    if program:
        from askfirst.optimizers.compile import load_compiled

        load_compiled(session.program, program)
    k = cfg.program.evidence_k
    try:
        with tracked_run(cfg, run_name=run_dir.name, tags={"askfirst.kind": "eval"}) as tracker:
            tracker.log_params({"model_id": session.lm.model, "questions": cfg.data.questions, "n_questions": len(examples),
                                "compiled_program": str(program or "")})

            def progress(i, n, rec):
                console.print(f"[{i}/{n}] {rec['id']}: {rec['route']:8s} {rec['seconds']:6.1f}s  {rec['answer'][:90]!r}")

            result = run_eval(session.program, examples, run_dir=run_dir, k=k, on_question=progress)
            if cfg.eval.hm:
                from askfirst.evaluate import judge_records
                from askfirst.programs.factory import build_judges

                console.print("judging replies (MTRAGEval: IDK, clarification, faithfulness, rating; RB_agg uses MiniLM "
                              "cosine as a stand-in for BERTScore)")
                judges = build_judges(cfg, session.retriever.embedder)
                texts = {pid: p.text for pid, p in session.retriever.passages.items()}
                result.summary["mtrag"] = judge_records(examples, result.records, judges, texts, run_dir=run_dir)
                tracker.log_metrics(result.summary["mtrag"])
                tracker.log_artifact(run_dir / "hm.jsonl")
            if cfg.eval.disambig_f1:
                from askfirst.evaluate import disambiguation_scores
                from askfirst.programs.factory import build_extractor

                console.print("scoring ambiguous questions: Disambig-F1 (short answers extracted by the judge LM, standing in for "
                              "the original metric's extractive QA model)")
                result.summary["disambiguation"] = disambiguation_scores(examples, result.records, build_extractor(cfg), run_dir=run_dir)
                tracker.log_metrics({f"ambiguous.{k}": v for k, v in result.summary["disambiguation"].items()})
            tracker.log_metrics({key: v for key, v in result.summary.items() if not isinstance(v, dict)})
            for route, row in result.summary["per_route"].items():
                tracker.log_metrics({f"{route}.route_accuracy": row["route_accuracy"], f"{route}.outcome_accuracy": row["outcome_accuracy"]})
            for name, row in result.summary.get("per_collection", {}).items():
                tracker.log_metrics({f"{name}.{m}": v for m, v in row.items()})
            for name in ("config.yaml", "predictions.jsonl", "scores.jsonl", "metrics.json"):
                tracker.log_artifact(run_dir / name)
    finally:
        session.close()
    print_summary(result.summary, k=k)
    console.print(f"outputs: {run_dir}")


app.command("compile")(compile_)


@app.command()
def serve(
    programs: Annotated[list[Path] | None, typer.Argument(help="Compiled programs to serve: compile run folders or program.json files.")] = None,
    config: ConfigOpt = None, set_: SetOpt = None,
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port.")] = 8000,
) -> None:
    """Serve the program over an OpenAI-compatible API; each variant (uncompiled 'askfirst', each compiled run) is a model id."""
    import uvicorn

    from askfirst.cli.render import console
    from askfirst.config import load_config
    from askfirst.lm.factory import build_adapter
    from askfirst.optimizers.compile import load_compiled
    from askfirst.programs.factory import build_program
    from askfirst.serve.app import Variant, create_app
    from askfirst.session import open_session

    cfg = resolve(config, set_)
    session = open_session(cfg)
    adapter = build_adapter(cfg.lm)
    variants = {"askfirst": Variant(session.program, session.lm, adapter)}
    for path in programs or []:
        run_config = path / "config.yaml" if path.is_dir() else path.parent / "config.yaml"
        # A compiled run is rebuilt from its own config (its switches), on this server's retriever and LM.
        program = build_program(load_config(run_config) if run_config.is_file() else cfg, session.retriever, store=session.store)
        variants[path.name if path.is_dir() else path.parent.name] = Variant(load_compiled(program, path), session.lm, adapter)
    console.print(f"serving {', '.join(variants)} at http://{host}:{port}/v1")
    try:
        uvicorn.run(create_app(variants), host=host, port=port, log_level="warning")
    finally:
        session.close()


@app.command()
def ablate(
    grid: Annotated[Path, typer.Argument(help="Ablation grid YAML (see askfirst/ablation.py for the format).")],
    set_: SetOpt = None,
) -> None:
    """Run every cell of an ablation grid over one question set; compare each with the reference cell (paired bootstrap 95% CIs)."""
    from askfirst.ablation import load_spec, run_cells
    from askfirst.cli.render import console, print_comparison
    from askfirst.config import ConfigError
    from askfirst.datasets.splits import configured_questions
    from askfirst.lm.factory import build_lm
    from askfirst.optimizers.compile import load_compiled
    from askfirst.programs.factory import build_program
    from askfirst.retrieval.factory import open_retriever
    from askfirst.run_dir import new_run_dir
    from askfirst.session import open_session
    from askfirst.tracking import tracked_run

    spec = load_spec(grid)
    extra = data_overrides(spec.questions, spec.limit)
    base = resolve(spec.base, set_, extra)
    configs = {c.name: resolve(spec.base, set_, [*extra, *c.overrides]) for c in spec.cells}
    index_fields = {"mode", "per_retriever_k", "rrf_k"}  # what a cell may vary without another index
    for name, cfg in configs.items():
        if cfg.data != base.data or cfg.retriever.model_dump(exclude=index_fields) != base.retriever.model_dump(exclude=index_fields):
            raise ConfigError(f"cell {name!r} changes the data or the index; cells may vary the program, LMs and retrieval mode/k only")
    examples = configured_questions(base)
    run_dir = new_run_dir(base, "ablate")
    (run_dir / "grid.yaml").write_text(grid.read_text(encoding="utf-8"), encoding="utf-8")
    console.print(f"run folder: {run_dir}  ({len(spec.cells)} cells x {len(examples)} questions; reference {spec.reference!r})")
    session = open_session(base)

    def program_for(cfg, cell):
        retriever = session.retriever if cfg.retriever == base.retriever else open_retriever(cfg, session.store)
        program = build_program(cfg, retriever, store=session.store)
        console.print(f"[bold]cell {cell.name}[/bold]: {' '.join(cell.overrides) or '(base)'}")
        return load_compiled(program, cell.program_state) if cell.program_state else program

    try:
        with tracked_run(base, run_name=run_dir.name, tags={"askfirst.kind": "ablate"}) as tracker:
            tracker.log_artifact(run_dir / "grid.yaml")
            rows = run_cells(spec, configs, examples, run_dir=run_dir, program_for=program_for, tracker=tracker,
                             lm_for=lambda cfg: session.lm if cfg.lm == base.lm else build_lm(cfg.lm, seed=cfg.seed),
                             k=base.program.evidence_k, on_question=lambda i, n, rec: console.print(f"  [{i}/{n}] {rec['id']}: {rec['route']}"))
    finally:
        session.close()
    print_comparison(rows, reference=spec.reference)
    console.print(f"outputs: {run_dir}")


@app.command()
def runs(
    config: ConfigOpt = None, set_: SetOpt = None,
    kind: Annotated[str | None, typer.Option(help="Only runs of this kind: eval, compile, ablate, bench-retrieval.")] = None,
    limit: Annotated[int, typer.Option(help="How many of the newest runs.")] = 20,
    compare: Annotated[list[str] | None, typer.Option(help="Run names to compare side by side (repeatable).")] = None,
    plot: Annotated[Path | None, typer.Option(help="Also write a PNG: compile runs' optimisation curves, other runs' metrics.")] = None,
) -> None:
    """List tracked runs (newest first) with their main metrics, or compare named runs."""
    from askfirst.cli.render import console, print_runs
    from askfirst.run_list import list_runs

    cfg = resolve(config, set_)
    rows = list_runs(cfg, kind=kind, limit=limit, names=compare)
    print_runs(rows)
    if plot and rows:
        from askfirst.run_plot import plot_runs
        from askfirst.tracking import tracking_uri

        console.print(f"plot: {plot_runs(rows, plot, tracking_uri=tracking_uri(cfg))}")


@app.command("tune-threshold")
def tune_threshold_(
    config: ConfigOpt = None, set_: SetOpt = None,
    program: Annotated[Path | None, typer.Option(help="Compiled program (run folder or program.json) to tune.")] = None,
    questions: Annotated[str | None, typer.Option(help="Question set; its validation half (by conversation) is used.")] = None,
    limit: Annotated[int | None, typer.Option(help="Only the first N questions before splitting.")] = None,
) -> None:
    """Tune the abstention threshold (program.answer_threshold) against the IDK-conditioned HM on the validation half."""
    from rich.table import Table

    from askfirst.cli.render import _fmt, console
    from askfirst.config import save_resolved
    from askfirst.datasets.splits import configured_questions
    from askfirst.optimizers.compile import load_compiled, program_state_path
    from askfirst.optimizers.threshold import tune_threshold
    from askfirst.programs.factory import build_judges
    from askfirst.run_dir import new_run_dir
    from askfirst.session import open_session
    from askfirst.tracking import tracked_run

    cfg = resolve(config, set_, [*data_overrides(questions, limit), "program.answer_threshold=null"])
    if program:
        program_state_path(program)
    val = configured_questions(cfg, split="validation")
    run_dir = new_run_dir(cfg, "threshold")
    console.print(f"run folder: {run_dir}  (validation questions: {len(val)})")
    session = open_session(cfg)
    try:
        if program:
            load_compiled(session.program, program)
        with tracked_run(cfg, run_name=run_dir.name, tags={"askfirst.kind": "tune-threshold"}) as tracker:
            result = tune_threshold(session.program, val, build_judges(cfg, session.retriever.embedder))
            for step, row in enumerate(result["table"]):
                tracker.log_metrics({"threshold": row["threshold"], "HM": row["HM"], "idk_rate": row["idk_rate"]}, step=step)
            tuned = cfg.model_copy(deep=True)
            tuned.program.answer_threshold = result["threshold"]
            save_resolved(tuned, run_dir)
            (run_dir / "threshold.json").write_text(json.dumps(result, indent=2), encoding="utf-8")
            tracker.log_metrics({"best_threshold": result["threshold"], "best_HM": result["HM"]})
            tracker.log_artifact(run_dir / "threshold.json")
    finally:
        session.close()
    table = Table(title="IDK-conditioned HM by abstention threshold (validation half)")
    for col in ("threshold", "HM", "RL_F", "RB_llm", "RB_agg", "IDK rate"):
        table.add_column(col)
    for row in result["table"]:
        table.add_row(_fmt(row["threshold"]), _fmt(row["HM"]), _fmt(row["RL_F_cond"]), _fmt(row["RB_llm_cond"]), _fmt(row["RB_agg_cond"]), _fmt(row["idk_rate"]))
    console.print(table)
    console.print(f"best threshold {result['threshold']} (HM {result['HM']:.3f}); config with it: {run_dir / 'config.yaml'}")


def main() -> None:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("mlflow").setLevel(logging.WARNING)  # its store-creation INFO lines are noise here
    try:
        app()
    except USER_ERRORS as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(2)
    except (KeyboardInterrupt, SystemExit) as exc:
        # Typer turns Ctrl-C into exit code 130 itself; either way, say how to continue.
        if isinstance(exc, SystemExit) and exc.code != 130:
            raise
        typer.echo("interrupted: finished work is kept (index batches, predictions.jsonl, optimiser checkpoints); "
                   "run again, or use --resume RUN_FOLDER (eval, compile) to continue", err=True)
        sys.exit(130)


if __name__ == "__main__":
    main()
