"""Crafted run folders and configs: what they may set, and what only the operator may (``askfirst.trust``).

Each command that reads a folder is given one that asks for an endpoint, a key variable, a path or a store location;
it must refuse it (naming the settings) or use the operator's values, and delete nothing outside its own root.
"""

import json
from pathlib import Path

import pytest
import yaml

from askfirst.config import ConfigError, load_config
from askfirst.retrieval.safe_paths import UnsafePathError, check_collection_name, inside
from askfirst.trust import UntrustedSettingsError, foreign_settings, operator_settings, read_run_config
from tests.test_cli import run_cli

ATTACKER = "http://127.0.0.1:9/v1"


def _folder(root: Path, name: str, **sections) -> Path:
    """A run folder whose config.yaml is the demo's with ``sections`` merged in (as a crafted download would be)."""
    folder = root / name
    folder.mkdir(parents=True)
    tree = load_config().model_dump(mode="json")
    for section, values in sections.items():
        tree[section] = (tree.get(section) or {}) | values if isinstance(values, dict) else values
    (folder / "config.yaml").write_text(yaml.safe_dump(tree))
    return folder


def _victim(tmp_path: Path) -> Path:
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "thesis.tex").write_text("years of work")
    return victim


@pytest.mark.parametrize("name", ["../../victim", "/tmp/victim", "..", ".", "a/b", "", "-x", "a.b", "x" * 129])
def test_a_collection_name_that_is_a_path_is_refused_where_the_config_is_validated(name):
    with pytest.raises(ConfigError, match="collection name"):
        load_config(overrides=[f"data.collection={name}"] if name else ["data.collection="])
    with pytest.raises(UnsafePathError):
        check_collection_name(name)


def test_index_with_a_collection_outside_the_store_deletes_nothing(monkeypatch, capsys, tmp_path):
    victim = _victim(tmp_path)
    runs = tmp_path / "runs"
    code, _, err = run_cli(monkeypatch, capsys, "index", "--set", f"runs_dir={runs}", "--set", "data.collection=../../victim")
    assert code == 2 and "collection name" in err and "Traceback" not in err
    assert (victim / "thesis.tex").read_text() == "years of work"


def test_the_store_folders_never_leave_their_root(tmp_path):
    _victim(tmp_path)
    store = tmp_path / "store"
    store.mkdir()
    for name in ("..", "../victim", "/tmp", ""):
        with pytest.raises(UnsafePathError):
            inside(store, name)
    (store / "link").symlink_to(tmp_path / "victim")
    with pytest.raises(UnsafePathError, match="would leave"):
        inside(store, "link")  # a link inside the root that points out of it
    assert inside(store, "demo") == store / "demo"


def test_bm25s_build_renames_and_deletes_only_inside_its_root(tmp_path):
    from askfirst.retrieval.bm25s_index import Bm25sIndex

    victim = _victim(tmp_path)
    root = tmp_path / "store-bm25s"
    root.mkdir()
    (root / "escape").symlink_to(victim)

    class Empty:
        collection = "escape"

        def iter_passages(self):
            return iter(())

    with pytest.raises(UnsafePathError):
        Bm25sIndex.build(Empty(), root / "escape", revision="r")
    assert (victim / "thesis.tex").read_text() == "years of work"


def test_eval_resume_of_a_folder_naming_a_collection_path_deletes_nothing(monkeypatch, capsys, tmp_path):
    victim = _victim(tmp_path)
    folder = _folder(tmp_path / "runs", "eval-crafted", data={"collection": str(victim)})
    code, _, err = run_cli(monkeypatch, capsys, "eval", "--resume", str(folder))
    assert code == 2 and "collection name" in err and "Traceback" not in err
    assert (victim / "thesis.tex").read_text() == "years of work"


def test_eval_resume_of_a_folder_with_an_endpoint_and_key_variable_is_refused_naming_them(monkeypatch, capsys, tmp_path):
    folder = _folder(tmp_path / "runs", "eval-crafted", retrieval_lm={"model": "openai/gpt-4o", "api_base": ATTACKER, "api_key_env": "ASKFIRST_API_KEY"})
    code, _, err = run_cli(monkeypatch, capsys, "eval", "--resume", str(folder))
    assert code == 2 and "Traceback" not in err
    for name in ("retrieval_lm.model", "retrieval_lm.api_base", "retrieval_lm.api_key_env"):
        assert name in err
    assert not (folder / "predictions.jsonl").exists()


@pytest.mark.parametrize("sections", [
    {"lm": {"api_base": ATTACKER}},
    {"lm": {"api_key_env": "AWS_SECRET_ACCESS_KEY"}},
    {"lm": {"model_path": "/etc/passwd", "sha256": "0" * 64}},
    {"judge_lm": {"model": "openai/gpt-4o", "api_base": ATTACKER}},
    {"compile": {"reflection_lm": {"model": "openai/x", "api_base": ATTACKER}}},
    {"urasys": {"indexing_lm": {"model": "openai/x", "api_base": ATTACKER}}},
    {"retriever": {"qdrant_url": ATTACKER}},
    {"retriever": {"qdrant_path": "/tmp/elsewhere"}},
    {"retriever": {"embedding_model": "/tmp/evil-model"}},
    {"data": {"corpus": "/etc"}},
    {"data": {"questions": "/home/someone/private.jsonl"}},
    {"data": {"shared_data_dir": "/"}},
    {"data": {"collection": "mtrag"}},
    {"tracking": {"tracking_uri": ATTACKER}},
    {"mafrag": {"fallback_search": "os:system"}},
    {"mafrag": {"synonyms_file": "/etc/shadow"}},
    {"program": {"compiled": "/tmp/someone/program.json"}},
    {"compile": {"instruction_candidates": "/etc/hosts"}},
])
def test_each_operator_only_setting_is_refused_from_a_folder(tmp_path, sections):
    from askfirst.trust import operator_config

    folder = _folder(tmp_path / "runs", "eval-crafted", **sections)
    with pytest.raises(UntrustedSettingsError, match="only your own config may set"):
        read_run_config(folder / "config.yaml", operator_config(folder), adopt=False)


def test_what_a_folder_may_set_is_kept(tmp_path):
    from askfirst.trust import operator_config

    folder = _folder(tmp_path / "runs", "eval-ok", program={"kind": "askfirst"}, notes={"iterations": 1}, askfirst={"min_top_cosine": 0.4},
                     lm={"model": "local/qwen2.5-coder-0.5b-instruct", "max_tokens": 99}, data={"questions": "mtrag:cloud", "limit": 3},
                     runs_dir="/somewhere/else")
    config, warnings = read_run_config(folder / "config.yaml", operator_config(folder), adopt=False)
    assert warnings == []
    assert (config.notes.iterations, config.askfirst.min_top_cosine, config.lm.model, config.lm.max_tokens) == (
        1, 0.4, "local/qwen2.5-coder-0.5b-instruct", 99)
    assert config.data.questions == "mtrag:cloud" and config.runs_path == folder.parent.resolve()  # never the folder's runs_dir


def test_a_folder_config_naming_a_base_file_is_refused(tmp_path):
    folder = _folder(tmp_path / "runs", "eval-crafted")
    tree = yaml.safe_load((folder / "config.yaml").read_text()) | {"base": "/etc/askfirst-secret.yaml"}
    (folder / "config.yaml").write_text(yaml.safe_dump(tree))
    with pytest.raises(UntrustedSettingsError, match="names a base config"):
        read_run_config(folder / "config.yaml", load_config(), adopt=True)


def test_serve_and_a_resume_with_the_operators_config_use_the_operators_values(tmp_path):
    operator = load_config(overrides=["lm.model=openai/served", "lm.api_base=http://127.0.0.1:8001/v1", "lm.api_key_env=MY_KEY"])
    folder = _folder(tmp_path / "runs", "compile-crafted", notes={"iterations": 1},
                     lm={"model": "openai/served", "api_base": ATTACKER, "api_key_env": "ASKFIRST_API_KEY"},
                     retrieval_lm={"model": "openai/other", "api_base": ATTACKER, "api_key_env": "ASKFIRST_API_KEY"})
    config, warnings = read_run_config(folder / "config.yaml", operator, adopt=True)
    assert (config.lm.api_base, config.lm.api_key_env) == ("http://127.0.0.1:8001/v1", "MY_KEY")
    assert config.retrieval_lm is None  # the operator's: none, so the operator's lm
    assert config.notes.iterations == 1  # a switch the folder may set
    assert len(warnings) == 1 and "lm.api_base" in warnings[0] and "retrieval_lm.api_base" in warnings[0]
    assert foreign_settings(config, operator) == []


def test_eval_resume_with_own_config_continues_with_its_values(monkeypatch, capsys, tmp_path):
    from askfirst.cli.options import resumed_config

    folder = _folder(tmp_path / "runs", "eval-crafted", lm={"api_base": ATTACKER})
    own = tmp_path / "mine.yaml"
    own.write_text("lm:\n  model: local/qwen2.5-coder-1.5b-instruct\n")
    config = resumed_config(folder, None, config=str(own))
    assert config.lm.api_base is None and "lm.api_base" in capsys.readouterr().err


def test_a_resume_never_drops_the_compiled_program_it_started_with(tmp_path):
    from askfirst.cli.options import resumed_config

    folder = _folder(tmp_path / "runs", "eval-x", program={"compiled": str(tmp_path / "compile-1")})
    own = tmp_path / "mine.yaml"
    own.write_text("{}\n")
    with pytest.raises(UntrustedSettingsError, match="program.compiled"):
        resumed_config(folder, None, config=str(own))


def test_compile_and_threshold_resumes_refuse_a_crafted_folder(monkeypatch, capsys, tmp_path):
    folder = _folder(tmp_path / "runs", "compile-crafted", lm={"api_base": ATTACKER})
    for command in (["compile", "--resume", str(folder)], ["tune-threshold", "--resume", str(folder)]):
        code, _, err = run_cli(monkeypatch, capsys, *command)
        assert code == 2 and "lm.api_base" in err, command


def test_ablate_resume_refuses_a_crafted_cell_and_a_cell_named_to_leave_the_folder(monkeypatch, capsys, tmp_path):
    run = _folder(tmp_path / "runs", "ablate-crafted")
    (run / "grid.yaml").write_text("cells:\n  a: {}\n  b: {lm.api_base: 'http://127.0.0.1:9/v1'}\n")
    code, _, err = run_cli(monkeypatch, capsys, "ablate", "--resume", str(run), "--cells", "a,b")
    assert code == 2 and "lm.api_base" in err
    (run / "a").mkdir()
    (run / "a" / "config.yaml").write_text((run / "config.yaml").read_text().replace("api_base: null", f"api_base: {ATTACKER}", 1))
    (run / "grid.yaml").write_text("cells:\n  a: {}\n")
    code, _, err = run_cli(monkeypatch, capsys, "ablate", "--resume", str(run))
    assert code == 2 and "lm.api_base" in err
    (run / "grid.yaml").write_text("cells:\n  a: {}\n  '..': {notes.iterations: 1}\n")
    code, _, err = run_cli(monkeypatch, capsys, "ablate", "--resume", str(run))
    assert code == 2 and "cannot name a folder inside the run folder" in err


def test_pooled_runs_refuse_a_crafted_folder(tmp_path):
    from askfirst.evaluation.pooled_runs import pooled_run

    folder = _folder(tmp_path / "runs", "eval-crafted", data={"questions": "/home/someone/private.jsonl"})
    with pytest.raises(UntrustedSettingsError, match="data.questions"):
        pooled_run([folder])


def test_report_and_policy_cv_refuse_a_crafted_folder(monkeypatch, capsys, tmp_path):
    folder = _folder(tmp_path / "runs", "eval-crafted", data={"questions": "/home/someone/private.jsonl"})
    (folder / "predictions.jsonl").write_text(json.dumps({"id": "a01", "route": "answer", "answer": "x", "seconds": 1.0, "lm_calls": 1,
                                                          "extras": {"signals": {}, "rules_route": "answer"}}) + "\n")
    for command in (["report", str(folder)], ["report", f"a={folder}", f"b={folder}"], ["policy", "cv", str(folder)]):
        code, _, err = run_cli(monkeypatch, capsys, *command)
        assert code == 2 and "data.questions" in err, command


def test_a_crafted_program_json_in_a_resumed_folder_is_refused_before_any_work(monkeypatch, capsys, tmp_path):
    folder = _folder(tmp_path / "runs", "eval-crafted")
    program = folder / "program.json"
    program.write_text(json.dumps({"step": {"__class__": "os.system", "demos": "rm -rf /"}}))
    code, _, err = run_cli(monkeypatch, capsys, "eval", "--resume", str(folder), "--program", str(program))
    assert code == 2 and "Traceback" not in err


def test_every_operator_setting_is_documented():
    names = [name for name, _ in operator_settings()]
    for expected in ("lm.api_base", "lm.api_key_env", "retrieval_lm.api_base", "retriever.qdrant_url", "data.collection",
                     "mafrag.fallback_search", "runs_dir", "tracking.tracking_uri", "program.compiled"):
        assert expected in names


@pytest.mark.parametrize("value", ["[a,", "{x: 1", "'open"])
def test_a_set_value_that_is_not_yaml_is_one_line(monkeypatch, capsys, value):
    code, _, err = run_cli(monkeypatch, capsys, "config", "--set", f"data.ids={value}")
    assert code == 2 and "not valid YAML" in err and len(err.strip().splitlines()) == 1


def test_an_empty_document_id_is_refused(tmp_path):
    from askfirst.datasets.corpus import load_corpus
    from askfirst.datasets.errors import DataError

    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"_id": "", "text": "x"}) + "\n")
    with pytest.raises(DataError, match="non-empty '_id'"):
        load_corpus(str(corpus))


def test_a_missing_program_folder_says_not_found(monkeypatch, capsys, tmp_path):
    code, _, err = run_cli(monkeypatch, capsys, "eval", "--program", str(tmp_path / "missing" / "dir"), "--set", f"runs_dir={tmp_path}")
    assert code == 2 and "compiled program not found" in err and "pickle" not in err


def test_an_eval_that_fails_before_its_first_question_leaves_no_empty_run_folder(monkeypatch, capsys, tmp_path):
    from askfirst.datasets.errors import DataError

    def fails(*_, **__):
        raise DataError("the compiled program does not fit the program")

    monkeypatch.setattr("askfirst.session.open_session", fails)
    code, _, err = run_cli(monkeypatch, capsys, "eval", "--set", f"runs_dir={tmp_path}")
    assert code == 2 and "does not fit" in err
    assert not list(tmp_path.glob("eval-*"))
