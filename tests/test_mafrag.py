"""MAF-RAG on a DummyLM: each phase accepting in turn, the debate converging or hitting its cap, the fallback."""

import pytest

from askfirst.config import ConfigError, load_config
from askfirst.programs.base import Resources
from askfirst.programs.mafrag.expansion import expand_with_synonyms, key_match, keywords, load_synonyms
from askfirst.programs.mafrag.program import MAFRAGProgram
from tests.conftest import PASSAGES, ListRetriever

ANSWER = {"answer": "The lab fee is EUR 85.", "cited_ids": ["fees-lab"]}
BY_ID = {p.passage_id: p for p in PASSAGES}


class QueryStore:
    """Dense search whose cosines depend on the query: ``{query: [(passage id, cosine), ...]}``; the embedder passes text through."""

    def __init__(self, table):
        self.table, self.queries = table, []

    def dense_search(self, vector, k):
        self.queries.append(vector)
        return next((hits for q, hits in self.table.items() if vector.startswith(q)), [])[:k]  # the first matching key

    def get_passages(self, ids):
        return {i: BY_ID[i] for i in ids if i in BY_ID}


class Echo:
    def embed(self, texts):
        return list(texts)


def program(table, *overrides):
    retriever = ListRetriever()
    store = QueryStore(table)
    config = load_config(overrides=list(overrides))
    return MAFRAGProgram(Resources(retriever=retriever, store=store, embedder=Echo()), config.mafrag, config.program, retries=0), store


Q = "How much is the lab fee?"


def test_vor_accepts_a_confident_dense_hit(use_dummy_lm):
    lm = use_dummy_lm([ANSWER])
    prog, store = program({Q: [("fees-lab", 0.82), ("fees-registration", 0.5)]})
    reply = prog(conversation=Q)
    assert reply.route == "answer" and reply.stage == "vor" and reply.confidence_by_phase == {"vor": 0.82}
    assert reply.citations == ["fees-lab"] and len(lm.history) == 1 and store.queries == [Q]


def test_evr_expands_rescored_and_accepts(use_dummy_lm, tmp_path):
    synonyms = tmp_path / "synonyms.yaml"
    synonyms.write_text("lab fee: laboratory fee\nCS: [computer science]\n")
    use_dummy_lm([{"expansions": ["laboratory course charge"]}, ANSWER])
    prog, store = program({f"{Q} laboratory fee": [("fees-lab", 0.7), ("course-cs201", 0.3)], Q: [("fees-lab", 0.6)]},
                          f"mafrag.synonyms_file={synonyms}")
    reply = prog(conversation=Q)
    assert reply.stage == "evr" and reply.expanded_query == f"{Q} laboratory fee laboratory course charge"
    # S = 0.7 cos + 0.3 KeyMatch; course-cs201's S (0.21 + a little) is under 0.35, so it is dropped
    assert [p.passage_id for p in reply.evidence] == ["fees-lab"] and 0.6 <= reply.confidence_by_phase["evr"] < 1


def debate_round(answer, *, unknown=False, confidence=0.8, agents=2):
    return [*({"answer": f"agent says {answer}"} for _ in range(agents)),
            {"answer": answer, "is_unknown": unknown, "converged": True, "confidence": confidence}]


LOW = {Q: [("fees-lab", 0.4), ("fees-registration", 0.4)]}  # VOR and EVR both below their thresholds


def test_the_debate_answers_when_its_aggregate_settles(use_dummy_lm):
    use_dummy_lm([{"expansions": []}, *debate_round("EUR 85 [fees-lab]."), *debate_round("EUR 85 [fees-lab].")])
    reply = program(LOW)[0](conversation=Q)
    assert reply.stage == "debate" and reply.debate_rounds == 2 and reply.citations == ["fees-lab"]
    assert reply.route == "answer" and set(reply.confidence_by_phase) == {"vor", "evr", "debate"}


def test_the_debate_stops_at_its_round_cap(use_dummy_lm):
    use_dummy_lm([{"expansions": []}, *debate_round("EUR 80."), *debate_round("EUR 85."), *debate_round("EUR 85 or 80.")])
    reply = program(LOW, "mafrag.debate_rounds=3")[0](conversation=Q)
    assert reply.debate_rounds == 3 and reply.answer == "EUR 85 or 80." and reply.stage == "debate"


def test_an_unknown_debate_falls_through_to_idk_offline(use_dummy_lm):
    use_dummy_lm([{"expansions": []}, *debate_round("unknown", unknown=True), *debate_round("unknown", unknown=True)])
    reply = program(LOW)[0](conversation=Q)
    assert reply.route == "idk" and reply.stage == "none" and reply.debate_rounds == 2


def fallback_search(query, k):
    return [BY_ID["fees-lab"]][:k]


def test_the_fallback_search_answers_what_the_collection_could_not(use_dummy_lm):
    use_dummy_lm([{"expansions": []}, *debate_round("unknown", unknown=True), *debate_round("unknown", unknown=True), ANSWER])
    reply = program(LOW, f"mafrag.fallback_search={__name__}:fallback_search")[0](conversation=Q)
    assert reply.stage == "fallback" and reply.route == "answer" and [p.passage_id for p in reply.evidence] == ["fees-lab"]


def test_a_bad_fallback_name_is_a_config_error():
    with pytest.raises(ConfigError, match="module:function"):
        program(LOW, "mafrag.fallback_search=nothing")


def test_keywords_keymatch_and_the_synonym_table(tmp_path):
    assert keywords("What is the lab fee for CS 201?") == ["lab", "fee", "cs", "201"]
    assert key_match(["laboratory", "fee", "tuition"], PASSAGES[0]) == pytest.approx(2 / 3)
    table = tmp_path / "s.yaml"
    table.write_text("SIUP: Surat Izin Usaha Perdagangan\n")
    assert expand_with_synonyms("apply for a siup", load_synonyms(str(table))) == ["Surat Izin Usaha Perdagangan"]
    table.write_text("- not a mapping\n")
    with pytest.raises(Exception, match="mapping"):
        load_synonyms(str(table))
