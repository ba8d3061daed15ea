"""Programs as plugins: the registry, the shared Reply, shared resources, per-step LMs, old configs."""

import copy
import logging

import dspy
import pytest
import yaml

from askfirst.config import ConfigError, load_config
from askfirst.programs.base import ProgramSpec, Reply, Resources
from askfirst.programs.registry import Registry, UnknownProgramError, get_spec, specs
from askfirst.retrieval.chunking import Passage
from tests.conftest import PASSAGES, ListRetriever


def test_every_program_package_registers_itself():
    assert {"notes_rag", "clarion", "urasys"} <= set(specs())
    assert get_spec("urasys").prepare_index is not None and get_spec("notes_rag").prepare_index is None


def test_an_unknown_kind_names_the_registered_programs():
    with pytest.raises(UnknownProgramError, match="registered programs: .*clarion.*notes_rag"):
        get_spec("nope")
    with pytest.raises(ConfigError, match="unknown program 'nope'"):
        load_config(overrides=["program.kind=nope"])


def test_a_program_can_compose_others_through_the_registry(monkeypatch):
    class Either(dspy.Module):
        def __init__(self, first, second):
            super().__init__()
            self.first, self.second = first, second

    def build(config, resources, registry):
        return Either(registry.build("notes_rag", config), registry.build("clarion", config))

    monkeypatch.setitem(specs(), "either", ProgramSpec(name="either", build=build))
    resources = Resources(retriever=ListRetriever())
    program = Registry(resources).build("either", load_config())
    assert program.first.resources is resources and program.second.resources is resources
    assert {n.split(".")[0] for n, _ in program.named_predictors()} == {"first", "second"}


def test_reply_record_carries_the_shared_fields_and_the_extras():
    reply = Reply(route="answer", answer="EUR 85.", citations=["fees-lab"], evidence=PASSAGES[:2], label="ANSWERABLE",
                  phase="vor", scores={"fees-lab": 0.8}, readings=[PASSAGES[0]])
    record = reply.to_record()
    assert record["retrieved"] == ["fees-lab", "fees-registration"] and record["citations_docs"] == ["fees-lab"]
    assert record["extras"] == {"phase": "vor", "scores": {"fees-lab": 0.8}, "readings": ["fees-lab"]}
    assert reply.phase == "vor" and isinstance(reply, dspy.Prediction)
    plain = dspy.Prediction(route="idk", answer="I don't know.", evidence=[], notes="n")
    assert Reply.of(plain).to_record()["extras"] == {"notes": "n"} and Reply.of(plain).route == "idk"


def test_copies_of_a_program_share_its_resources_without_warnings(caplog):
    resources = Resources(retriever=ListRetriever())
    program = Registry(resources).build("notes_rag", load_config())
    with caplog.at_level(logging.WARNING):
        clone = program.deepcopy()
        also = copy.deepcopy(program)
    assert clone.resources is resources and also.resources is resources
    assert not [r for r in caplog.records if "deep copy" in r.getMessage()]
    assert clone.router is not program.router  # the predictors themselves are copied


@pytest.mark.parametrize(("kind", "expected"), [("notes_rag", {"retrieval.query_generator", "retrieval.notes_builder", "reranker.rank"}),
                                                ("clarion", {"act"})])
def test_retrieval_lm_runs_the_retrieval_steps_of_every_program(kind, expected, monkeypatch):
    built = []

    def fake_build_lm(lm_config, *, seed=0):
        built.append(lm_config.model)
        return dspy.utils.DummyLM([{}])

    monkeypatch.setattr("askfirst.lm.factory.build_lm", fake_build_lm)
    config = load_config(overrides=[f"program.kind={kind}", "retrieval_lm.model=openai/small"])
    program = Registry(Resources(retriever=ListRetriever())).build(kind, config)
    on_small = {n for n, p in program.named_predictors() if p.lm is not None}
    assert built == ["openai/small"] and on_small == expected
    assert len(on_small) < len(program.named_predictors())  # the answer side stays on lm


def test_retrieval_lm_runs_the_urasys_agents(monkeypatch):
    from askfirst.programs.urasys.program import URASysProgram

    monkeypatch.setattr("askfirst.lm.factory.build_lm", lambda lm_config, *, seed=0: dspy.utils.DummyLM([{}]))
    config = load_config(overrides=["program.kind=urasys", "retrieval_lm.model=openai/small"])
    monkeypatch.setattr("askfirst.programs.urasys.program.build_urasys", lambda cfg, res: URASysProgram(
        faq_search=lambda q, k: [], document_search=lambda q, k: [], config=cfg.urasys, program=cfg.program))
    program = Registry(Resources(retriever=ListRetriever())).build("urasys", config)
    on_small = {n.split(".")[0] for n, p in program.named_predictors() if p.lm is not None}
    assert on_small == {"decompose", "faq_agent", "document_agent"}


def test_a_run_folder_config_from_before_the_plugins_still_loads(tmp_path):
    old = {"program": {"kind": "urasys", "iterations": 2}, "clarion": {"mode": "ask_first", "search_k": 3},
           "urasys": {"max_attempts": 2, "indexing_lm": {"model": "local/qwen2.5-coder-0.5b-instruct"}}, "runs_dir": "runs"}
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(old))
    config = load_config(path)
    assert config.program.kind == "urasys" and config.clarion.mode == "ask_first" and config.urasys.max_attempts == 2
    assert load_config(path, overrides=["urasys.max_attempts=3"]).urasys.max_attempts == 3


def test_resources_dense_returns_cosines():
    class Store:
        def dense_search(self, vector, k):
            return [("fees-lab", 0.81), ("gone", 0.5)]

        def get_passages(self, ids):  # "gone" was deleted after the search
            return {p.passage_id: p for p in PASSAGES if p.passage_id in ids}

    class Embedder:
        def embed(self, texts):
            return [[1.0]]

    retriever = ListRetriever()
    found = Resources(retriever=retriever, store=Store(), embedder=Embedder()).dense("lab fee", 2)
    assert [(p.passage_id, s) for p, s in found] == [("fees-lab", 0.81)] and isinstance(found[0][0], Passage)
