"""Do our scores agree with the reference scorers (trec_eval, MTRAG's own scripts) on one finished eval?

Usage: ``.venv/bin/python bench/fidelity_report.py runs/eval-…``

- Ranking: the eval's ``ranking_recall@10`` / ``ranking_ndcg@5`` beside ``pytrec_eval`` (trec_eval's measures
  ``recall.10`` / ``ndcg_cut.5``) run on the exported ``run.trec`` and ``qrels.trec``, to 4 decimals.
- MTRAG's own scripts (an MTRAG eval; vendored in ``tests/fixtures/mtrag_official``): ``format_checker.py`` on the
  export (``mtrag_predictions.jsonl``), and ``run_retrieval_eval.py``'s nDCG/Recall@1,3,5 per collection and weighted,
  beside ``metrics.json``'s ``mtrag_official_retrieval``: from MTRAG-UN's dev qrels under ``ASKFIRST_DATA_DIR`` where they
  hold every task the export has judgements for, else (MTRAG's synthetic tasks, a user's own) from the run's ``qrels.trec``.
- Generation (an eval run with ``eval.hm=true``): RB_agg and HM with the ROUGE-L this project used before it adopted ``rouge_score``
  (its own LCS on SQuAD-normalised tokens, articles dropped) and with ``rouge_score``'s (MTRAG's scorer), the judges'
  verdicts held fixed; and HM under both conditionings (current, and 2026-01 as the SemEval notes paper was scored).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import tempfile
from pathlib import Path

import pytrec_eval

from askfirst.datasets.jsonl import read_jsonl
from askfirst.evaluation.answer_metrics import normalize_answer
from askfirst.datasets.shared_data import shared_data_dir
from askfirst.evaluation.exports import MTRAG_COLLECTIONS, TREC_QRELS_FILE, TREC_RUN_FILE
from askfirst.evaluation.mtrag_formulas import condition, harmonic3, harmonic_mean, rouge_l_f
from askfirst.evaluation.runner import read_scores


def rouge_l_before(prediction: str, reference: str) -> float:
    """The ROUGE-L F this project computed before it adopted ``rouge_score`` (``optimizers/mtrag_formulas.py`` at 9db5f81^)."""
    p, r = normalize_answer(prediction).split(), normalize_answer(reference).split()
    if not p or not r:
        return 0.0
    prev = [0] * (len(r) + 1)
    for tok in p:
        cur = [0] * (len(r) + 1)
        for j, ref_tok in enumerate(r, start=1):
            cur[j] = prev[j - 1] + 1 if tok == ref_tok else max(prev[j], cur[j - 1])
        prev = cur
    lcs = prev[-1]
    if lcs == 0:
        return 0.0
    precision, recall = lcs / len(p), lcs / len(r)
    return 2 * precision * recall / (precision + recall)


def ranking_agreement(run_dir: Path) -> list[tuple[str, float, float]]:
    """(metric, ours, pytrec_eval) over the questions both score: those with judgements and a ranking."""
    with (run_dir / TREC_RUN_FILE).open() as handle:
        run = pytrec_eval.parse_run(handle)
    with (run_dir / TREC_QRELS_FILE).open() as handle:
        qrels = pytrec_eval.parse_qrel(handle)
    reference = pytrec_eval.RelevanceEvaluator(qrels, {"recall.10", "ndcg_cut.5"}).evaluate(run)
    ours = {r["id"]: r for r in read_scores(run_dir)}
    ids = sorted(q for q in reference if q in ours and ours[q].get("ranking_recall@10") is not None)
    rows = []
    for name, trec in (("ranking_recall@10", "recall_10"), ("ranking_ndcg@5", "ndcg_cut_5")):
        rows.append((name, sum(ours[q][name] for q in ids) / len(ids), sum(reference[q][trec] for q in ids) / len(ids)))
    return rows


OFFICIAL = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "mtrag_official"


def _official(name: str):
    spec = importlib.util.spec_from_file_location(f"mtrag_official_{name}", OFFICIAL / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _qrels_files(run_dir: Path, tmp: Path, scorer) -> tuple[dict[str, str], str]:
    """The qrels file run_retrieval_eval.py reads for each collection: MTRAG-UN's dev files when they judge every task the
    run's ``qrels.trec`` judges, else one file of the run's own judgements (the script scores a collection's tasks only);
    and which of the two it is. ``scorer`` is the vendored run_retrieval_eval.py, whose own reader reads the dev files."""
    with (run_dir / TREC_QRELS_FILE).open() as handle:
        judged = pytrec_eval.parse_qrel(handle)
    mtrag = shared_data_dir(None) / "mtrag"
    dev = {official: mtrag / f"mtragun_dev_qrels_{name}.tsv" for name, official in MTRAG_COLLECTIONS.items()}
    if all(path.exists() for path in dev.values()):
        if judged.keys() <= set().union(*(scorer.load_qrels(str(path)) for path in dev.values())):
            return {official: str(path) for official, path in dev.items()}, "MTRAG-UN's dev qrels files"
    own = tmp / "qrels.tsv"
    own.write_text("query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{g}\n" for q, docs in judged.items() for d, g in docs.items()),
                   encoding="utf-8")
    return dict.fromkeys(MTRAG_COLLECTIONS.values(), str(own)), f"the run's own {TREC_QRELS_FILE} (MTRAG-UN's dev files do not judge all its tasks)"


def official_agreement(run_dir: Path) -> tuple[list[str], str, list[tuple[str, float, float]]] | None:
    """MTRAG's format checker's errors on the export, the qrels used, and (measure, ours, run_retrieval_eval.py) per
    collection and weighted; ``None`` when the run has no MTRAG export."""
    export = run_dir / "mtrag_predictions.jsonl"
    metrics = json.loads((run_dir / "metrics.json").read_text()) if (run_dir / "metrics.json").exists() else {}
    if not export.exists() or "mtrag_official_retrieval" not in metrics:
        return None
    tasks = [json.loads(line) for line in export.read_text(encoding="utf-8").splitlines()]
    with tempfile.TemporaryDirectory() as tmp:
        task_file = Path(tmp) / "tasks.jsonl"
        task_file.write_text("".join(json.dumps({"task_id": t["task_id"]}) + "\n" for t in tasks), encoding="utf-8")
        errors, _ = _official("format_checker").validate_prediction_file(str(task_file), str(export), "rag_taskc")
        scorer = _official("run_retrieval_eval")
        qrels, source = _qrels_files(run_dir, Path(tmp), scorer)
        per_collection, recall, ndcg, _ = scorer.weighted_scores(str(export), qrels)
    ours, rows = metrics["mtrag_official_retrieval"], []
    for row in sorted(per_collection, key=lambda r: r["collection"]):
        mine = ours["collections"][row["collection"]]
        short = next(n for n, o in MTRAG_COLLECTIONS.items() if o == row["collection"])
        for i, k in enumerate((1, 3, 5)):
            rows += [(f"{short} nDCG@{k}", mine[f"nDCG@{k}"], row["nDCG"][i]), (f"{short} Recall@{k}", mine[f"Recall@{k}"], row["Recall"][i])]
    for i, k in enumerate((1, 3, 5)):
        rows += [(f"weighted nDCG@{k}", ours["all"][f"nDCG@{k}"], ndcg[i]), (f"weighted Recall@{k}", ours["all"][f"Recall@{k}"], recall[i])]
    return errors, source, rows


def generation_before_after(run_dir: Path) -> list[tuple[str, float, float]] | None:
    """(measure, with the old ROUGE-L, with rouge_score's) from ``mtrag_predictions.jsonl`` and the judged ``hm.jsonl``."""
    hm_path, pred_path = run_dir / "hm.jsonl", run_dir / "mtrag_predictions.jsonl"
    if not hm_path.exists() or not pred_path.exists():
        return None
    judged = {r["id"]: r for _, r in read_jsonl(hm_path) if "error" not in r}
    tasks = [t for _, t in read_jsonl(pred_path) if t["task_id"] in judged]
    out = []
    for version in ("current", "2026-01"):
        means = {}
        for label, rouge in (("before", rouge_l_before), ("after", rouge_l_f)):
            conditioned = {"RL_F": [], "RB_llm": [], "RB_agg": []}
            for task in tasks:
                row = judged[task["task_id"]]
                raw = dict(row["raw"])
                parts = row.get("rb_agg_parts")
                if parts:  # R and E as judged; L recomputed with this ROUGE-L
                    prediction, reference = task["predictions"][0]["text"], task["targets"][0]["text"]
                    raw["RB_agg"] = harmonic3(parts["R"], rouge(prediction, reference), parts["E"])
                for metric in conditioned:
                    conditioned[metric].append(condition(raw[metric] or 0.0, answerability=task["answerability"][0], idk=row["idk"],
                                                         clarification=row.get("clarification"), version=version))
            mean = {m: sum(v) / len(v) for m, v in conditioned.items()}
            means[label] = (mean["RB_agg"], harmonic_mean(list(mean.values())))
        out.append((f"RB_agg ({version})", means["before"][0], means["after"][0]))
        out.append((f"HM ({version})", means["before"][1], means["after"][1]))
    return out


def main(run_dir: str) -> None:
    run = Path(run_dir)
    missing = [name for name in (TREC_RUN_FILE, TREC_QRELS_FILE, "scores.jsonl") if not (run / name).exists()]
    if missing:
        raise SystemExit(f"{run} has no {', '.join(missing)}: not a finished eval, or one from before these files were written")
    print(f"# Fidelity of {run.name}\n\n| metric | ours | pytrec_eval | equal to 4 decimals |\n|---|---|---|---|")
    for name, ours, ref in ranking_agreement(run):
        print(f"| {name} | {ours:.4f} | {ref:.4f} | {'yes' if round(ours, 4) == round(ref, 4) else 'NO'} |")
    official = official_agreement(run)
    if official is not None:
        errors, source, rows = official
        print(f"\nMTRAG's format_checker.py (rag_taskc) on the export: {len(errors)} error(s)" + "".join(f"\n- {e}" for e in errors[:10]))
        print(f"\nrun_retrieval_eval.py's figures with the qrels of {source}:")
        print("\n| measure | ours (metrics.json) | run_retrieval_eval.py | equal to 4 decimals |\n|---|---|---|---|")
        for name, ours, ref in rows:
            print(f"| {name} | {ours:.4f} | {ref:.4f} | {'yes' if round(ours, 4) == round(ref, 4) else 'NO'} |")
    rows = generation_before_after(run)
    if rows is None:
        print("\n(no judged hm.jsonl beside mtrag_predictions.jsonl: run the eval with --set eval.hm=true on MTRAG tasks for the generation rows)")
        return
    print("\n| measure | old ROUGE-L (own LCS, articles dropped) | rouge_score |\n|---|---|---|")
    for name, before, after in rows:
        print(f"| {name} | {before:.4f} | {after:.4f} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog="Reads MTRAG-UN's dev qrels from ASKFIRST_DATA_DIR.")
    parser.add_argument("run_dir", help="a finished eval's run folder (runs/eval-…)")
    main(parser.parse_args().run_dir)
