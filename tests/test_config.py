import pytest
import yaml

from askfirst.config import ConfigError, builtin_config_path, load_config
from askfirst.run_dir import save_resolved


def test_defaults_follow_the_seed_system():
    cfg = load_config()
    assert cfg.notes.iterations == 3 and cfg.notes.queries_per_iteration == 3
    assert cfg.retriever.rrf_k == 60 and cfg.retriever.mode == "hybrid"


def test_overrides_are_typed_and_dotted():
    cfg = load_config(overrides=["notes.iterations=1", "notes.build=false", "lm.model=openai/gpt-4o-mini", "data.limit=null"])
    assert cfg.notes.iterations == 1 and cfg.notes.build is False
    assert cfg.lm.model == "openai/gpt-4o-mini" and cfg.data.limit is None


def test_unknown_key_is_named(tmp_path):
    with pytest.raises(ConfigError, match="unknown key 'program.iterationz'"):
        load_config(overrides=["program.iterationz=2"])
    bad = tmp_path / "c.yaml"
    bad.write_text("retriever:\n  rrf: 10\n")
    with pytest.raises(ConfigError, match=r"unknown key 'retriever.rrf'.*"):
        load_config(bad)


def test_bad_values_and_files(tmp_path):
    with pytest.raises(ConfigError, match="notes.iterations"):
        load_config(overrides=["notes.iterations=0"])
    with pytest.raises(ConfigError, match="must look like"):
        load_config(overrides=["notes.iterations"])
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "missing.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("lm: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(broken)


def test_resolved_config_round_trips(tmp_path):
    cfg = load_config(overrides=["notes.reranker=false", "retriever.per_retriever_k=7"])
    path = save_resolved(cfg, tmp_path / "run")
    assert load_config(path) == cfg


def test_a_config_starts_from_its_base_and_merges_its_sections_into_it(tmp_path, monkeypatch):
    demo = load_config(builtin_config_path("demo"))
    (tmp_path / "sub").mkdir()
    (tmp_path / "first.yaml").write_text("base: demo\nnotes:\n  iterations: 1\ndata:\n  limit: 5\n")
    (tmp_path / "sub" / "second.yaml").write_text("base: ../first.yaml\ndata:\n  limit: null\n  shuffle: true\n")
    monkeypatch.chdir(tmp_path / "sub")  # a relative base is read from the file's folder, not the working one
    second = load_config(tmp_path / "sub" / "second.yaml")
    assert second.notes.iterations == 1 and second.data.limit is None and second.data.shuffle
    assert second.program.kind == demo.program.kind == "askfirst" and second.lm == demo.lm  # the rest of each section: demo's
    assert second.notes.model_dump(exclude={"iterations"}) == demo.notes.model_dump(exclude={"iterations"})
    path = save_resolved(second, tmp_path / "run")  # the snapshot is the whole resolution, with no base to follow
    assert "base" not in yaml.safe_load(path.read_text()) and load_config(path) == second


def test_a_missing_or_circular_base_is_named(tmp_path):
    (tmp_path / "a.yaml").write_text("base: b.yaml\n")
    (tmp_path / "b.yaml").write_text("base: a.yaml\n")
    with pytest.raises(ConfigError, match=r"a.yaml is its own base: .*a.yaml -> .*b.yaml -> .*a.yaml"):
        load_config(tmp_path / "a.yaml")
    (tmp_path / "c.yaml").write_text("base: nowhere.yaml\n")
    with pytest.raises(ConfigError, match=r"not found: .*nowhere.yaml \(the base of .*c.yaml\)"):
        load_config(tmp_path / "c.yaml")
    (tmp_path / "d.yaml").write_text("base: [demo]\n")
    with pytest.raises(ConfigError, match="base must be a file or built-in config name"):
        load_config(tmp_path / "d.yaml")


@pytest.mark.parametrize("name", ["default", "demo"])
def test_builtin_configs_load(name):
    assert load_config(builtin_config_path(name)).data.corpus == "demo"


def test_string_fields_keep_override_text():
    cfg = load_config(overrides=[f"lm.sha256={'0' * 64}", "data.collection=2024", "lm.model_path=null", "lm.temperature=0.5"])
    assert cfg.lm.sha256 == "0" * 64 and cfg.data.collection == "2024" and cfg.lm.model_path is None
    assert cfg.lm.temperature == 0.5


def test_a_setting_from_before_it_moved_section_still_loads_in_its_new_place(tmp_path):
    assert load_config(overrides=["program.iterations=1"]).notes.iterations == 1
    old = tmp_path / "old.yaml"
    old.write_text("program:\n  kind: notes_rag\n  notes: false\n")
    config = load_config(old)
    assert config.notes.build is False and "notes" not in type(config.program).model_fields
    with pytest.raises(ConfigError, match="given at both places"):
        load_config(old, overrides=["notes.build=true"])
