"""Terminal output: the reply to a question, and the tables an evaluation prints."""

from __future__ import annotations

import sys

from rich.console import Console
from rich.table import Table
from rich.text import Text

# Piped output (logs, CI) gets a wide fixed width instead of rich's 80 columns, so tables stay readable. No markup: what
# is printed holds answers, passages, ids and names read from run folders, whose "[...]" is text ("[/b]" would raise).
console = Console(width=None if sys.stdout.isatty() else 160, markup=False)
# Progress goes to stderr, so `askfirst ask --json` output stays parseable.
progress_console = Console(stderr=True, width=None if sys.stderr.isatty() else 160, markup=False)


def labelled(label: str, text: str, style: str = "bold") -> Text:
    """``label`` in ``style``, then ``text`` as it is (never read as markup)."""
    return Text.assemble((label, style), " ", str(text))


_index_started: dict[int, float] = {}  # when the build of ``todo`` passages printed first (its rate and ETA are from then)


def index_progress(done: int, todo: int) -> None:
    """One line per written group: passages embedded, their rate so far, and the time left at that rate."""
    import time

    now = time.perf_counter()
    started = _index_started.setdefault(todo, now)
    rate = done / (now - started) if now > started else 0.0
    eta = f", {(todo - done) / rate / 60:.1f} min left" if rate and done < todo else ""
    progress_console.print(f"  indexing: embedded {done}/{todo}" + (f" ({rate:,.0f} passages/s{eta})" if rate else ""))
    if done >= todo:
        _index_started.pop(todo, None)


def augment_progress(done: int, total: int, unit: str) -> None:
    progress_console.print(f"  URASys index: chunk {done}/{total} ({unit})")


def augment_summary(out) -> str:
    """One line on a URASys index update (an ``AugmentResult``): chunks, LM calls, minutes, entries."""
    r = out.report
    return (f"URASys index: {r.chunks} chunks ({r.processed} through the LM, {r.reused} from the ledger, {r.failed} failed "
            f"and kept raw), {r.faqs} FAQ entries; {out.lm_calls} LM calls, {r.seconds / 60:.1f} min; "
            f"{out.units.added + out.units.updated} units and {out.faqs.added + out.faqs.updated} FAQ entries embedded")


def fmt(v) -> str:
    """A figure as the reports print it: three decimals, "-" for none, a dict of shares as "key value, …"."""
    if isinstance(v, dict):  # shares, e.g. of the stage that answered
        return ", ".join(f"{k} {fmt(x)}" for k, x in v.items())
    return "-" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v)


def print_reply(record: dict, evidence: dict[str, str]) -> None:
    console.print(labelled("route:", record["route"] + (f"  (label {record['label']}, confidence {fmt(record['confidence'])})" if record.get("label") else "")))
    console.print(labelled("answer:", record["answer"]))
    if record.get("options"):
        console.print(labelled("options:", "; ".join(record["options"])))
    for pid in record.get("citations") or []:
        console.print(Text("  ").append(labelled(f"[{pid}]", evidence.get(pid, "")[:200], style="cyan")))
    for w in record.get("warnings") or []:
        console.print(labelled("warning:", w, style="yellow"))


def print_summary(summary: dict, *, k: int) -> None:
    per_route = Table(title="Per expected route")
    for col in ("route", "n", "route accuracy [95% CI]", "outcome accuracy"):
        per_route.add_column(col)
    for route, row in summary["per_route"].items():
        ci = row.get("route_accuracy_ci95")  # absent from summaries written before it was recorded
        accuracy = fmt(row["route_accuracy"]) + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")
        per_route.add_row(route, str(row["n"]), accuracy, fmt(row["outcome_accuracy"]))
    console.print(per_route)
    confusion = Table(title="Expected route (rows) vs route taken (columns)")
    taken = sorted({t for row in summary["confusion"].values() for t in row})
    confusion.add_column("expected")
    for t in taken:
        confusion.add_column(t)
    for exp, row in summary["confusion"].items():
        confusion.add_row(exp, *[str(row.get(t, 0)) for t in taken])
    console.print(confusion)
    metrics = Table(title="Metrics (mean over the questions each applies to)")
    metrics.add_column("metric")
    metrics.add_column("value")
    from askfirst.evaluation.metrics import shown_in

    for key in [m.key(k=k) for m in shown_in("eval")] + ["n"]:
        if key in summary:
            metrics.add_row(key, fmt(summary.get(key)))
    if summary.get("stage_shares"):
        metrics.add_row("stage_shares", fmt(summary["stage_shares"]))
    if summary.get("answerability_n"):
        metrics.add_row("P(answerable): questions assessed, share answerable, mean",
                        f"{summary['answerability_n']}, {fmt(summary['answerability_share'])}, {fmt(summary['mean_p_answerable'])}")
    console.print(metrics)
    if summary.get("per_collection"):
        coll = Table(title="Retrieval per collection (the program's whole ranking, document level)")
        for col in ("collection", "n", "Recall@10", "nDCG@5"):
            coll.add_column(col)
        for name, row in summary["per_collection"].items():
            coll.add_row(name, str(row["n"]), fmt(row["ranking_recall@10"]), fmt(row["ranking_ndcg@5"]))
        console.print(coll)
    if summary.get("ambiguity"):
        a = summary["ambiguity"]
        parts = [f"{k} {fmt(v)} (n={a.get('n_' + k)})" for k, v in a.items() if not k.startswith("n_")]
        console.print("Ambiguous questions (judge LM): " + "; ".join(parts))
    if summary.get("span"):
        s = summary["span"]
        console.print(f"Short answer span (judge LM extracts it; SQuAD's measure): EM {fmt(s['span_em'])}, F1 {fmt(s['span_f1'])} "
                      f"(n={s['n_span']})")
    if "mtrag" in summary:
        m = summary["mtrag"]
        hm = Table(title=f"MTRAGEval generation scores (IDK-conditioned means; RB_agg with {m.get('rb_agg_similarity', 'minilm')} "
                         "similarity standing in for BERTScore)")
        for col in ("RL_F", "RB_llm", "RB_agg", "HM", "HM (2026-01 conditioning)", "IDK rate", "judged partial"):
            hm.add_column(col)
        hm.add_row(fmt(m.get("RL_F_cond")), fmt(m.get("RB_llm_cond")), fmt(m.get("RB_agg_cond")), fmt(m.get("HM")),
                   fmt(m.get("HM_2026_01")), fmt(m.get("idk_rate")), fmt(m.get("idk_partial_rate")))
        console.print(hm)


def print_comparison(rows: list[dict], *, reference: str) -> None:
    """Each cell's means, and its difference from the reference with a paired-bootstrap 95% CI."""
    skip = ("cell", "n", "seconds_per_question", "lm_calls_per_question", "tokens_per_question")
    keys = list(dict.fromkeys(k for row in rows for k in row if k not in skip and not k.endswith(".diff")))
    table = Table(title=f"Ablation: difference from {reference!r} [95% paired bootstrap CI]")
    table.add_column("cell")
    table.add_column("n")
    for key in keys:
        table.add_column(key)
    table.add_column("s/question")
    table.add_column("LM calls/question")
    table.add_column("tokens in/out per question")
    for row in rows:
        cells = []
        for key in keys:
            diff = row.get(f"{key}.diff")
            cells.append(fmt(row.get(key)) + (f"  ({diff[0]:+.3f} [{diff[1]:+.3f}, {diff[2]:+.3f}])" if diff else ""))
        tokens = row.get("tokens_per_question") or (None, None)
        table.add_row(row["cell"], str(row["n"]), *cells, fmt(row["seconds_per_question"]), fmt(row["lm_calls_per_question"]),
                      f"{fmt(tokens[0])} / {fmt(tokens[1])}")
    console.print(table)


def print_runs(rows: list[dict]) -> None:
    if not rows:
        console.print("no tracked runs found")
        return
    columns = [c for c in rows[0] if c not in ("run_id",) and any(r[c] not in (None, "") for r in rows)]
    table = Table(title="Tracked runs (newest first)")
    for c in columns:
        table.add_column(c.replace("_", " "))
    for r in rows:
        table.add_row(*[fmt(r[c]) for c in columns])
    console.print(table)
