"""Bad input that gave a traceback now gives one clear error naming the file (and byte) or the turn."""

import json
import sys

import pytest

from askfirst.datasets.corpus import load_corpus
from askfirst.datasets.errors import DataError
from askfirst.datasets.questions import load_questions
from askfirst.programs.common.conversation import ConversationError, to_turns

LATIN1 = "Caf\u00e9 fees".encode("latin-1")


def test_a_non_utf8_corpus_names_the_file_line_and_byte(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    data = b'{"_id": "a", "text": "ok"}\n{"_id": "b", "text": "' + LATIN1 + b'"}\n'
    corpus.write_bytes(data)
    with pytest.raises(DataError, match=rf"corpus.jsonl:2: not UTF-8 text \(byte {data.index(0xE9)} of the file"):
        load_corpus(str(corpus))
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "fees.txt").write_bytes(b"abc " + LATIN1)
    with pytest.raises(DataError, match=r"fees.txt: not UTF-8 text \(byte 7"):
        load_corpus(str(folder))


def test_a_synthetic_mtrag_task_without_a_task_id_names_its_file_and_line(tmp_path):
    from askfirst.datasets.mtrag import COLLECTIONS, SYNTHETIC_FILE, load_mtrag_synthetic, passage_pool_path

    for name in COLLECTIONS:
        passage_pool_path(tmp_path, name).parent.mkdir(parents=True, exist_ok=True)
        passage_pool_path(tmp_path, name).write_text(json.dumps({"_id": f"{name}-1", "text": f"All about  {name}."}) + "\n")
    task = {"task_id": "t<::>1", "input": [{"speaker": "user", "text": "What about cloud?"}], "Answerability": ["PARTIAL"],
            "Collection": "mt-rag-ibmcloud-elser-512-100-20240502", "contexts": [{"text": "All about cloud."}]}
    synthetic = tmp_path / "mtrag" / SYNTHETIC_FILE
    synthetic.parent.mkdir()
    synthetic.write_text(json.dumps(task) + "\n" + json.dumps({**task, "task_id": "x"}) + "\n")
    first, _ = load_mtrag_synthetic(tmp_path)
    assert (first.answerability, first.collection, first.gold_passages) == ("PARTIAL", "cloud", ["cloud-1"])
    del task["task_id"]
    synthetic.write_text(json.dumps({**task, "task_id": "ok"}) + "\n" + json.dumps(task) + "\n")
    with pytest.raises(DataError, match=r"synthetic.jsonl:2: the task has no task_id"):
        load_mtrag_synthetic(tmp_path)


def test_a_non_utf8_question_set_and_conversation_file(tmp_path, monkeypatch, capsys):
    questions = tmp_path / "q.jsonl"
    data = b'{"id": "q1", "turns": [{"role": "user", "content": "' + LATIN1 + b'"}]}\n'
    questions.write_bytes(data)
    with pytest.raises(DataError, match=rf"q.jsonl:1: not UTF-8 text \(byte {data.index(0xE9)}"):
        load_questions(str(questions))
    from askfirst.cli.app import main

    chat = tmp_path / "chat.json"
    chat.write_bytes(b'[{"role": "user", "content": "' + LATIN1 + b'"}]')
    monkeypatch.setattr(sys, "argv", ["askfirst", "ask", "--conversation", str(chat)])
    with pytest.raises(SystemExit) as exc:
        main()
    assert exc.value.code == 2 and "chat.json: not UTF-8 text (byte 33" in capsys.readouterr().err


@pytest.mark.parametrize(("conversation", "message"), [
    (["What is the lab fee?", "And tuition?"], "turn 1 is str"),
    ([{"role": "user", "content": "hi"}, 3], "turn 2 is int"),
    ({"role": "user"}, "not dict"),
])
def test_a_conversation_of_the_wrong_shape_is_a_clear_error(conversation, message):
    with pytest.raises(ConversationError, match=message):
        to_turns(conversation)


def test_a_conversation_file_of_strings_is_refused_before_any_work(tmp_path, monkeypatch, capsys):
    from askfirst.cli.app import main

    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps(["What is the lab fee?"]))
    monkeypatch.setattr(sys, "argv", ["askfirst", "ask", "--conversation", str(chat)])
    with pytest.raises(SystemExit) as exc:
        main()
    assert exc.value.code == 2 and "turn 1 is str" in capsys.readouterr().err


def test_clarion_warns_when_it_cuts_a_long_question(use_dummy_lm, retriever):
    from askfirst.config import ProgramConfig
    from askfirst.programs.clarion.config import ClarionConfig
    from askfirst.programs.clarion.program import ClarionProgram

    use_dummy_lm([{"is_ambiguous": False, "ambiguity_type": "none", "ambiguous_aspects": [], "clarification_needed": ""},
                  {"action": "ANSWER", "interpretation_number": 1, "argument": ""}])
    program = ClarionProgram(retriever, ClarionConfig(max_iterations=2), ProgramConfig(max_question_chars=20), retries=0)
    reply = program(conversation="What is the laboratory fee for CHEM 101L this year?")
    assert reply.warnings == ["question cut from 51 to 20 characters"]


def test_a_qdrant_server_that_does_not_answer_is_one_clear_error():
    import socket
    import time

    from askfirst.retrieval.qdrant_store import PassageStore, StoreError

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    started = time.perf_counter()
    with pytest.raises(StoreError, match=f"the Qdrant server at http://127.0.0.1:{port} does not answer"):
        PassageStore(collection="x", dim=4, url=f"http://127.0.0.1:{port}")
    assert time.perf_counter() - started < 30


def test_a_question_sets_conversations_and_collections_are_read_and_splits_keep_a_conversation_together(tmp_path):
    from askfirst.datasets.splits import split_by_conversation

    questions = tmp_path / "q.jsonl"
    turn = [{"role": "user", "content": "When does it open?"}]
    questions.write_text("".join(json.dumps({"id": f"q{i}", "turns": turn, "conversation_id": f"c{i // 2}", "collection": "pool" if i % 4 < 2 else "gym"}) + "\n"
                                 for i in range(8)))
    examples = load_questions(str(questions))
    assert [(e.conversation_id, e.collection) for e in examples[:4]] == [("c0", "pool"), ("c0", "pool"), ("c1", "gym"), ("c1", "gym")]
    train, validation = split_by_conversation(examples, train_fraction=0.5)
    assert {e.conversation_id for e in train}.isdisjoint({e.conversation_id for e in validation})
    assert len(train) == len(validation) == 4  # two whole conversations each
    questions.write_text(json.dumps({"id": "q1", "turns": turn, "conversation_id": ["c0"]}) + "\n")
    with pytest.raises(DataError, match=r"q.jsonl:1: 'conversation_id' is a non-empty string"):
        load_questions(str(questions))
