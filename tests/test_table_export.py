"""Comparison and run tables as Markdown, CSV and LaTeX."""

import csv
import io

import pytest

from askfirst.table_export import comparison_table, records_table, render

ROWS = [
    {"cell": "notes_rag", "n": 3, "route_correct": 0.5, "stages": None, "seconds_per_question": 10.0, "lm_calls_per_question": 5.0,
     "tokens_per_question": (900.0, 60.0)},
    {"cell": "mafrag", "n": 3, "route_correct": 0.25, "route_correct.diff": (-0.25, -0.5, 0.0), "stages": {"vor": 0.5, "evr": 0.5},
     "seconds_per_question": 12.0, "lm_calls_per_question": 2.0, "tokens_per_question": (400.0, 30.0)},
]


def test_csv_round_trips_the_comparison():
    header, body = comparison_table(ROWS)
    parsed = list(csv.reader(io.StringIO(render(header, body, "csv"))))
    assert parsed[0] == ["cell", "n", "route_correct", "stages", "s/question", "LM calls/question", "tokens in/out per question"]
    assert parsed[2][2] == "0.250 (-0.250 [-0.500, +0.000])" and parsed[2][3] == "vor 0.500, evr 0.500"
    assert parsed[1][-1] == "900.000 / 60.000"


def test_latex_and_markdown_escape_what_they_must():
    latex = render(["a_b", "c"], [["50% & more", "x"]], "latex")
    assert r"a\_b & c \\" in latex and r"50\% \& more & x \\" in latex and latex.startswith(r"\begin{tabular}{ll}")
    assert "| x\\|y |" in render(["a"], [["x|y"]], "md")
    with pytest.raises(ValueError, match="unknown table format"):
        render(["a"], [["b"]], "xlsx")


def test_records_keep_only_columns_with_values():
    header, body = records_table([{"run_id": "1", "name": "eval-x", "HM": None, "outcome": 0.5}], skip=("run_id",))
    assert header == ["name", "outcome"] and body == [["eval-x", "0.500"]]
