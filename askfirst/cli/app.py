"""The ``askfirst`` command line: config, index, ask, eval."""

from __future__ import annotations

import json
import logging
import sys
import time
from pathlib import Path
from typing import Annotated

import typer

from askfirst.cli.ablate_command import ablate
from askfirst.cli.compile_command import compile_
from askfirst.cli.errors import USER_ERRORS
from askfirst.cli.eval_command import evaluate
from askfirst.cli.options import ConfigOpt, SetOpt, check_compiled, resolve
from askfirst.cli.render import augment_progress, index_progress
from askfirst.cli.policy_command import policy_app
from askfirst.cli.report_command import report
from askfirst.cli.threshold_command import tune_threshold_

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False, help="askfirst: answer, partially answer, ask to clarify, or say 'I don't know' - with citations.")


@app.command("config")
def show_config(config: ConfigOpt = None, set_: SetOpt = None,
                reference: Annotated[bool, typer.Option(help="Print the reference of every setting as Markdown instead (the docs' page).")] = False) -> None:
    """Print the resolved configuration (defaults + file + overrides) as YAML."""
    if reference:
        from askfirst.config_reference import render

        typer.echo(render(), nl=False)
        return
    typer.echo(resolve(config, set_).to_yaml())


@app.command()
def index(
    config: ConfigOpt = None, set_: SetOpt = None,
    corpus: Annotated[str | None, typer.Option(help="JSONL file or folder of .txt/.md files (default: data.corpus).")] = None,
    prune: Annotated[bool, typer.Option(help="Also delete indexed passages no longer in the corpus.")] = False,
    augment: Annotated[bool, typer.Option(help="Also build what the configured program needs beyond the plain index "
                                                 "(URASys: chunk-and-title units and the FAQ collection, written by the LM).")] = False,
) -> None:
    """Build or update the index of a corpus (incremental; an interrupted build resumes)."""
    from askfirst.cli.render import augment_summary, console
    from askfirst.config import ConfigError
    from askfirst.datasets.splits import configured_corpus
    from askfirst.programs.registry import get_spec
    from askfirst.retrieval.factory import collection_name, index_corpus, open_retriever, open_store

    cfg = resolve(config, set_, [f"data.corpus={corpus}"] if corpus else [])
    spec = get_spec(cfg.program.kind)
    if augment and spec.prepare_index is None:
        raise ConfigError(f"program {spec.name!r} needs no index beyond the plain one; --augment is for programs such as urasys "
                          "(--config urasys or --set program.kind=urasys)")
    docs = configured_corpus(cfg)  # read (and reject bad input) before opening the store or loading a model
    if augment:
        from askfirst.lm.factory import configure_dspy

        configure_dspy(cfg)  # a missing model fails here, before any index work
    store = open_store(cfg, rebuild_old_layout=True)
    if store.rebuilt_old_layout:
        console.print(f"collection {collection_name(cfg)!r} had askfirst's old layout: deleted, and built anew")
    try:
        report = index_corpus(cfg, store, docs=docs, prune=prune, optimize=False, progress=index_progress)
        if not augment:
            docs = None  # the corpus is not held while the store builds its index, nor while BM25's is built from the collection
        if report.to_optimize:
            started = time.perf_counter()
            store.optimize()
            report.seconds += time.perf_counter() - started
        console.print(f"collection {collection_name(cfg)!r}: {report.passages} passages from the corpus; {report.added} added, "
                      f"{report.updated} updated, {report.unchanged} unchanged, {report.removed} removed in {report.seconds:.1f}s")
        open_retriever(cfg, store, say=console.print)  # builds the lexical index now (bm25s), not on the next command's open
        if augment:
            built = spec.prepare_index(cfg, store, docs=docs, progress=augment_progress)
            console.print(augment_summary(built) if built is not None else f"program {spec.name!r} needs nothing beyond the plain index "
                          "with this config" + (f" (--set {spec.index_switch})" if spec.index_switch else ""))
    finally:
        store.close()


def _read_conversation(path: Path) -> list[dict]:
    from askfirst.datasets.errors import DataError
    from askfirst.datasets.jsonl import read_json

    data = read_json(path, what="conversation file")
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
    from askfirst.evaluation.runner import prediction_record
    from askfirst.programs.common.conversation import ConversationError, to_turns
    from askfirst.session import open_session

    if (question is None) == (conversation is None):
        raise ConversationError("give either a question or --conversation FILE")
    turns = _read_conversation(conversation) if conversation else [{"role": "user", "content": question}]
    to_turns(turns)  # validates before any model or index is loaded
    session = open_session(resolve(config, set_), progress=index_progress, augment_progress=augment_progress)
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


app.command("eval")(evaluate)
app.command("compile")(compile_)
app.command()(ablate)
app.command("tune-threshold")(tune_threshold_)
app.command()(report)
app.add_typer(policy_app, name="policy")


@app.command()
def serve(
    programs: Annotated[list[Path] | None, typer.Argument(help="Compiled programs to serve: compile run folders or program.json files.")] = None,
    config: ConfigOpt = None, set_: SetOpt = None,
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port.")] = 8000,
    api_key: Annotated[str | None, typer.Option(envvar="ASKFIRST_API_KEY", show_envvar=True,
                                                help="Require this bearer token on every request (401 without it).")] = None,
) -> None:
    """Serve the program over an OpenAI-compatible API; each variant is a model id: 'askfirst' (the config's program,
    compiled only if program.compiled says so) and each compiled program given, rebuilt from its compile run's config.

    Requests are answered one at a time when any of the config's LMs runs in-process (llama.cpp), else concurrently.
    """
    import uvicorn

    from askfirst.cli.render import console
    from askfirst.cli.options import warn
    from askfirst.lm.factory import build_adapter
    from askfirst.optimizers.compile import program_state_path
    from askfirst.programs.registry import build_program
    from askfirst.serve.app import Variant, create_app
    from askfirst.session import open_session
    from askfirst.trust import read_run_config

    cfg = check_compiled(resolve(config, set_))
    for path in programs or []:
        program_state_path(path)  # a bad file fails here, before the index and the models load
    session = open_session(cfg, progress=index_progress, augment_progress=augment_progress)
    adapter = build_adapter(cfg.lm)
    local = any(lm is not None and lm.model.startswith("local/") for lm in (cfg.lm, cfg.retrieval_lm, cfg.judge_lm))
    variants = {"askfirst": Variant(session.program, session.lm, adapter, serialise=local)}
    for path in programs or []:
        run_config = path / "config.yaml" if path.is_dir() else path.parent / "config.yaml"
        # A compiled run is rebuilt from its own config (its switches), on this server's retriever and LM: the folder is
        # untrusted, so its models, endpoints, key variables and paths are replaced by the server's (askfirst.trust).
        variant = cfg.model_copy(deep=True)
        if run_config.is_file():
            variant, warnings = read_run_config(run_config, cfg, adopt=True)
            for line in warnings:
                warn(line)
        variant.program.compiled = str(path)
        variants[path.name if path.is_dir() else path.parent.name] = Variant(build_program(variant, session.resources), session.lm, adapter, serialise=local)
    console.print(f"serving {', '.join(variants)} at http://{host}:{port}/v1")
    try:
        # On SIGTERM, requests still running after a few seconds are cancelled (each stops at its next LM call).
        uvicorn.run(create_app(variants, api_key=api_key), host=host, port=port, log_level="warning", timeout_graceful_shutdown=3)
    finally:
        session.close()


@app.command("programs")
def list_programs() -> None:
    """List the registered programs (program.kind), their config sections and the LM roles of their steps."""
    from rich.table import Table

    from askfirst.cli.render import console
    from askfirst.programs.registry import specs

    table = Table(title="registered programs")
    for column in ("program.kind", "section", "retrieval_lm runs", "description"):
        table.add_column(column, overflow="fold")
    for spec in specs().values():
        roles = ", ".join(p.rstrip(".") for p in spec.lm_roles.get("retrieval_lm", ())) or "-"
        table.add_row(spec.name, spec.section or "program", roles, spec.description)
    console.print(table)


@app.command()
def doctor(config: ConfigOpt = None, set_: SetOpt = None) -> None:
    """Check what the resolved config needs (LMs and their pins, embeddings, data) and say how to fix what is missing.

    Exit code 1 when `askfirst eval` with this config could not run.
    """
    from rich.table import Table

    from askfirst.cli.render import console
    from askfirst.doctor import diagnose

    checks = diagnose(resolve(config, set_))
    table = Table(title="askfirst doctor", show_lines=False)
    for column in ("", "what", "found", "fix"):
        table.add_column(column, overflow="fold")
    for c in checks:
        mark = "ok" if c.ok else ("MISSING" if c.needed else "missing (not needed)")
        table.add_row(mark, c.what, c.detail, "" if c.ok else c.fix)
    console.print(table)
    blocking = [c for c in checks if c.blocking]
    if blocking:
        console.print(f"not ready: {len(blocking)} missing piece(s) stop `askfirst eval` with this config; run the fixes above")
        raise typer.Exit(1)
    console.print("ready: `askfirst eval` can run with this config")


@app.command()
def runs(
    config: ConfigOpt = None, set_: SetOpt = None,
    kind: Annotated[str | None, typer.Option(help="Only runs of this kind: eval, compile, ablate, bench-retrieval.")] = None,
    limit: Annotated[int, typer.Option(help="How many of the newest runs.")] = 20,
    compare: Annotated[list[str] | None, typer.Option(help="Run names to compare side by side (repeatable).")] = None,
    plot: Annotated[Path | None, typer.Option(help="Also write a PNG: compile runs' optimisation curves, other runs' metrics.")] = None,
    format_: Annotated[str | None, typer.Option("--format", help="Print the table as md, csv or latex instead.")] = None,
) -> None:
    """List tracked runs (newest first) with their main metrics, or compare named runs."""
    from askfirst.cli.render import console, print_runs
    from askfirst.run_list import list_runs
    from askfirst.table_export import FORMATS, records_table, render

    if format_ is not None and format_ not in FORMATS:
        raise typer.BadParameter(f"--format must be one of {', '.join(FORMATS)}")
    cfg = resolve(config, set_)
    rows = list_runs(cfg, kind=kind, limit=limit, names=compare)
    if format_:
        typer.echo(render(*records_table(rows, skip=("run_id",)), format_), nl=False)
    else:
        print_runs(rows)
    if plot and rows:
        from askfirst.run_plot import plot_runs
        from askfirst.tracking import tracking_uri

        console.print(f"plot: {plot_runs(rows, plot, tracking_uri=tracking_uri(cfg))}")


def main() -> None:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("mlflow").setLevel(logging.WARNING)  # its store-creation INFO lines are noise here
    logging.getLogger("askfirst.optimizers").setLevel(logging.INFO)  # a compile's per-candidate scores, as they come
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
                   "run again, or use --resume RUN_FOLDER (eval, compile, ablate) to continue", err=True)
        sys.exit(130)


if __name__ == "__main__":
    main()
