"""Compiled programs load by a schema: instructions and demos only; a file that could redirect the LM is refused."""

import json

import pytest

from askfirst.programs.base import Resources
from askfirst.config import load_config
from askfirst.datasets.errors import DataError
from askfirst.optimizers.compile import changed_steps, load_compiled, program_state_path, save_compiled
from askfirst.optimizers.program_state import ProgramStateError
from askfirst.programs.registry import build_program


def _program(retriever):
    return build_program(load_config(overrides=["notes.iterations=1", "notes.reranker=false"]), Resources(retriever=retriever))


@pytest.fixture
def saved(tmp_path, retriever):
    program = _program(retriever)
    program.router.classify.signature = program.router.classify.signature.with_instructions("Compiled instruction.")
    program.responders.complete.demos = [{"question": "q", "answer": "a", "augmented": True}]
    path = save_compiled(program, tmp_path)
    return path, json.loads(path.read_text())


def _write(path, state):
    path.write_text(json.dumps(state))
    return path


def test_instructions_and_demos_load_and_the_lm_stays(saved, retriever):
    path, _ = saved
    fresh = _program(retriever)
    marker = object()
    fresh.router.classify.lm = marker
    load_compiled(fresh, path)
    assert fresh.router.classify.signature.instructions == "Compiled instruction."
    assert fresh.responders.complete.demos[0]["answer"] == "a" and fresh.router.classify.lm is marker


def test_a_predictor_config_that_would_redirect_the_lm_is_refused(saved, retriever):
    path, state = saved
    state["router.classify"]["config"] = {"api_base": "http://elsewhere/v1"}
    fresh = _program(retriever)
    with pytest.raises(ProgramStateError, match=r"router.classify: \['config'\] cannot be loaded"):
        load_compiled(fresh, _write(path, state))
    assert "api_base" not in fresh.router.classify.config  # nothing was applied


@pytest.mark.parametrize(("mutate", "message"), [
    (lambda s: s["router.classify"].__setitem__("lm", {"model": "openai/x", "api_base": "http://elsewhere"}), "an LM is never loaded"),
    (lambda s: s["router.classify"]["signature"].__setitem__("extended_signature", {}), "only instructions and fields"),
    (lambda s: s["router.classify"]["signature"]["fields"].pop(), "expected .* fields"),
    (lambda s: s["responders.complete"]["demos"].append({"question": "q", "secret": "x"}), r"\['secret'\] are not fields"),
    (lambda s: s["router.classify"]["signature"].__setitem__("instructions", ["not", "text"]), "must be text"),
    (lambda s: s.__setitem__("made_up.predict", {"signature": {}}), r"unknown predictor\(s\) \['made_up.predict'\]"),
])
def test_anything_beyond_instructions_and_demos_is_refused_by_name(saved, retriever, mutate, message):
    path, state = saved
    mutate(state)
    with pytest.raises(ProgramStateError, match=message):
        load_compiled(_program(retriever), _write(path, state))


def test_a_state_naming_some_predictors_loads_them_and_leaves_the_others_as_they_are(saved, retriever):
    path, state = saved
    del state["router.classify"]
    fresh = _program(retriever)
    own = fresh.router.classify.signature.instructions
    load_compiled(fresh, _write(path, state))
    assert fresh.router.classify.signature.instructions == own and fresh.responders.complete.demos[0]["answer"] == "a"


def test_saved_with_its_changed_steps_a_compiled_program_names_only_them(tmp_path, retriever):
    seed, compiled = _program(retriever), _program(retriever)
    compiled.responders.complete.demos = [{"question": "q", "answer": "a"}]
    steps = changed_steps(compiled, seed=seed)
    assert steps == ["responders.complete"] and changed_steps(seed, seed=_program(retriever)) == []
    state = json.loads(save_compiled(compiled, tmp_path, steps=steps).read_text())
    assert set(state) == {"responders.complete", "metadata"} and state["metadata"]["dependency_versions"]
    (tmp_path / "unchanged").mkdir()
    assert set(json.loads(save_compiled(seed, tmp_path / "unchanged", steps=[]).read_text())) == {"metadata"}
    load_compiled(seed, tmp_path)
    assert seed.responders.complete.demos[0]["answer"] == "a"


def test_program_compiled_loads_the_state_as_the_program_is_built(saved, retriever):
    path, _ = saved
    config = load_config(overrides=["notes.iterations=1", "notes.reranker=false", f"program.compiled={path.parent}"])
    program = build_program(config, Resources(retriever=retriever))
    assert program.router.classify.signature.instructions == "Compiled instruction."
    assert _program(retriever).router.classify.signature.instructions != "Compiled instruction."  # and only then
    other_kind = load_config(overrides=["program.kind=askfirst", f"program.compiled={path}"])
    with pytest.raises(ProgramStateError, match="predictor"):  # a state compiled for another program is refused by name
        build_program(other_kind, Resources(retriever=retriever))


def test_a_resumed_run_keeps_the_compiled_program_it_started_with(saved, tmp_path):
    from askfirst.cli.options import resumed_config
    from askfirst.config import ConfigError
    from askfirst.run_dir import save_resolved

    path, _ = saved
    run, older = tmp_path / "run", tmp_path / "older"
    save_resolved(load_config(overrides=[f"program.compiled={path}"]), run)
    assert resumed_config(run, None).program.compiled == str(path)  # no --program needed on a resume
    assert resumed_config(run, path).program.compiled == str(path)
    with pytest.raises(ConfigError, match="started with"):
        resumed_config(run, tmp_path / "another.json")
    save_resolved(load_config(), older)  # a run folder from before program.compiled was recorded
    assert resumed_config(older, None).program.compiled is None
    assert resumed_config(older, path).program.compiled == str(path)
    assert load_config(older / "config.yaml").program.compiled == str(path)  # and now it records it


def test_a_shipped_compiled_program_loads_by_its_name(saved, retriever, monkeypatch, tmp_path):
    path, _ = saved
    monkeypatch.setattr("askfirst.optimizers.compile.SHIPPED_DIR", tmp_path.parent)
    name = f"askfirst:{tmp_path.name}"  # the folder holding program.json, as askfirst/compiled/<name>/ holds it
    assert program_state_path(name) == path
    built = build_program(load_config(overrides=["notes.iterations=1", "notes.reranker=false", f"program.compiled={name}"]), Resources(retriever=retriever))
    assert built.router.classify.signature.instructions == "Compiled instruction."


@pytest.mark.parametrize("value", ["none", "None", "null", ""])
def test_program_compiled_none_runs_the_uncompiled_program(value):
    # The command line's way to switch a shipped default off.
    assert load_config(overrides=["program.compiled=askfirst:any"]).program.compiled == "askfirst:any"
    assert load_config(overrides=[f"program.compiled={value}"]).program.compiled is None


@pytest.mark.parametrize("text", ["not json", "[1, 2]", '{"router.classify": 3}'])
def test_a_file_that_is_no_state_object_fails_before_any_work(tmp_path, text):
    path = tmp_path / "program.json"
    path.write_text(text)
    with pytest.raises(DataError, match="compiled program"):
        program_state_path(path)


def test_checkpoints_are_verified_against_this_installations_key(tmp_path, monkeypatch):
    from askfirst.optimizers.checkpoint_signing import CheckpointTrustError, sign_checkpoints, verify_checkpoints

    folder = tmp_path / "gepa"
    folder.mkdir()
    (folder / "gepa_state.bin").write_bytes(b"pickled state")
    with pytest.raises(CheckpointTrustError, match="no valid manifest"):
        verify_checkpoints(folder)
    sign_checkpoints(folder)
    verify_checkpoints(folder)
    (folder / "extra.bin").write_bytes(b"dropped in later")
    with pytest.raises(CheckpointTrustError, match="extra.bin was not written by this installation"):
        verify_checkpoints(folder)
    (folder / "extra.bin").unlink()
    monkeypatch.setenv("ASKFIRST_CONFIG_DIR", str(tmp_path / "another-installation"))
    with pytest.raises(CheckpointTrustError, match="gepa_state.bin"):
        verify_checkpoints(folder)
    verify_checkpoints(tmp_path / "absent")  # a fresh run has nothing to check


def test_the_lm_cache_in_a_run_folder_never_runs_a_planted_pickle(tmp_path):
    import os

    import diskcache
    import dspy

    from askfirst.lm.factory import cache_dir, configure_dspy

    marker = tmp_path / "pwned"

    class Planted:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    config = load_config(overrides=[f"runs_dir={tmp_path}", "lm.model=openai/unused"])
    plain = diskcache.FanoutCache(directory=str(cache_dir(config)), shards=16, timeout=10, disk=diskcache.Disk)
    plain.set("key", Planted())
    plain.close()
    configure_dspy(config)
    with pytest.raises(Exception, match="not in the safe_types allowlist"):
        dspy.cache.disk_cache.get("key")
    assert not marker.exists()
