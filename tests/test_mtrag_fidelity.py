"""The MTRAG export read by MTRAG's own format checker and retrieval scorer (vendored in tests/fixtures/mtrag_official):
valid, with the text of every passage the program ranked, and scored the same as askfirst scores it, to 4 decimals."""

import importlib.util
import json
import random
from pathlib import Path

import dspy
import pytest

from askfirst.evaluation.exports import MTRAG_COLLECTIONS, NO_RANKING, mtrag_predictions, trec_qrels, trec_run
from askfirst.evaluation.mtrag_retrieval import official_retrieval

OFFICIAL = Path(__file__).parent / "fixtures" / "mtrag_official"


def _official(name: str):
    spec = importlib.util.spec_from_file_location(f"mtrag_official_{name}", OFFICIAL / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _tasks(seed: int = 0):
    """Tasks of three collections over documents cut into several passages (``<doc>#<n>``), some without qrels, one
    whose step failed before any ranking, and rankings deeper than the export's ten contexts."""
    rng = random.Random(seed)
    examples, records, texts = [], [], {}
    for i in range(36):
        collection = ("clapnq", "cloud", "fiqa")[i % 3]
        docs = [f"{collection}-d{j}" for j in range(30)]
        for doc in docs:
            for n in range(3):
                texts[f"{doc}#{n}"] = f"passage {n} of {doc}"
        qrels = {} if i % 5 == 4 else {d: rng.choice([1, 2]) for d in rng.sample(docs, rng.randint(1, 3))}
        ranked = rng.sample(docs, 15)
        failed = i == 7
        examples.append(dspy.Example(id=f"t{i}", conversation_id=f"c{i // 2}", kind="mtrag", collection=collection, qrels=qrels,
                                     answerability="ANSWERABLE" if qrels else "UNANSWERABLE", reference="ref",
                                     conversation=[{"role": "user", "content": f"question {i}?"}]))
        records.append({"id": f"t{i}", "route": "error" if failed else "answer", "answer": "an answer",
                        "ranked_docs": [] if failed else ranked,
                        "ranked_passages": [] if failed else [f"{d}#{rng.randint(0, 2)}" for d in ranked]})
    return examples, records, texts


@pytest.fixture
def export(tmp_path):
    examples, records, texts = _tasks()
    path = tmp_path / "mtrag_predictions.jsonl"
    path.write_text(mtrag_predictions(examples, records, texts), encoding="utf-8")
    return examples, records, texts, path


def test_the_official_format_checker_accepts_the_export(export, tmp_path):
    examples, _, _, path = export
    task_file = tmp_path / "tasks.jsonl"
    task_file.write_text("".join(json.dumps({"task_id": e.id}) + "\n" for e in examples))
    errors, _ = _official("format_checker").validate_prediction_file(str(task_file), str(path), "rag_taskc")
    assert errors == []


def test_every_context_holds_the_text_of_the_passage_the_program_ranked(export):
    _, records, texts, path = export
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    for line, rec in zip(lines, records):
        assert len(line["contexts"]) <= 10 and line["Collection"] in MTRAG_COLLECTIONS.values()
        if rec["ranked_docs"]:
            assert [c["text"] for c in line["contexts"]] == [texts[p] for p in rec["ranked_passages"][:10]]
        else:
            assert [c["document_id"] for c in line["contexts"]] == [NO_RANKING]


def test_the_official_retrieval_scorer_gives_our_figures(export, tmp_path):
    examples, records, _, path = export
    qrels_files = {}
    for name, official in MTRAG_COLLECTIONS.items():
        lines = ["query-id\tcorpus-id\tscore"] + [f"{e.id}\t{d}\t{g}" for e in examples if e.collection == name for d, g in e.qrels.items()]
        qrels_files[official] = tmp_path / f"{name}.tsv"
        qrels_files[official].write_text("\n".join(lines) + "\n")
    per_collection, recall, ndcg, _ = _official("run_retrieval_eval").weighted_scores(str(path), {
        c: str(qrels_files[c]) for c in {json.loads(line)["Collection"] for line in path.read_text().splitlines()}})
    ours = official_retrieval(examples, records)
    for row in per_collection:
        mine = ours["collections"][row["collection"]]
        assert row["count"] == mine["records"]
        assert row["Recall"] == pytest.approx([mine[f"Recall@{k}"] for k in (1, 3, 5)], abs=1e-4)
        assert row["nDCG"] == pytest.approx([mine[f"nDCG@{k}"] for k in (1, 3, 5)], abs=1e-4)
    assert recall == pytest.approx([ours["all"][f"Recall@{k}"] for k in (1, 3, 5)], abs=1e-4)
    assert ndcg == pytest.approx([ours["all"][f"nDCG@{k}"] for k in (1, 3, 5)], abs=1e-4)


def test_a_failed_question_scores_zero_in_the_run_file_as_in_askfirst(export):
    import pytrec_eval

    examples, records, _, _ = export
    judged = {e.id for e in examples if e.qrels}
    run, qrels = {}, {}
    for line in trec_run(records, run_name="r", judged=judged).splitlines():
        qid, _, doc, _, score, _ = line.split()
        run.setdefault(qid, {})[doc] = float(score)
    for line in trec_qrels(examples).splitlines():
        qid, _, doc, grade = line.split()
        qrels.setdefault(qid, {})[doc] = int(grade)
    scored = pytrec_eval.RelevanceEvaluator(qrels, {"recall.10"}).evaluate(run)
    assert set(scored) == judged and scored["t7"]["recall_10"] == 0.0  # the failed question is in, at 0


def test_the_fidelity_report_scores_a_run_outside_mtrag_un_dev_with_its_own_qrels(export, tmp_path, monkeypatch):
    """bench/fidelity_report.py on a run folder whose tasks MTRAG-UN's dev qrels do not judge (as MTRAG's synthetic
    tasks): the official scorer reads the run's own qrels.trec and gives askfirst's figures."""
    examples, records, _, path = export
    run = tmp_path / "run"
    run.mkdir()
    (run / "mtrag_predictions.jsonl").write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    (run / "qrels.trec").write_text(trec_qrels(examples), encoding="utf-8")
    (run / "metrics.json").write_text(json.dumps({"mtrag_official_retrieval": official_retrieval(examples, records)}))
    monkeypatch.setenv("ASKFIRST_DATA_DIR", str(tmp_path / "no-shared-data"))
    spec = importlib.util.spec_from_file_location("fidelity_report", Path(__file__).parents[1] / "bench" / "fidelity_report.py")
    report = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(report)

    errors, source, rows = report.official_agreement(run)
    assert errors == [] and "qrels.trec" in source
    assert len(rows) == 3 * 6 + 6  # three collections and the weighted figures, nDCG and Recall at 1, 3, 5
    assert all(ours == pytest.approx(theirs, abs=1e-4) for _, ours, theirs in rows)
