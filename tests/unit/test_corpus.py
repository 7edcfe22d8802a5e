import json

import pytest

from sunar.errors import SunarError
from sunar.stores.corpus import CorpusReport, read_corpus


def write(tmp_path, lines):
    path = tmp_path / "c.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_reads_valid_documents_in_order(tmp_path):
    path = write(tmp_path, [json.dumps({"id": "a", "title": "A", "text": "alpha"}), json.dumps({"id": "b", "text": "beta"})])
    docs = read_corpus(path)
    assert [(d.id, d.title, d.text) for d in docs] == [("a", "A", "alpha"), ("b", "", "beta")]
    assert docs[0].content == "A\nalpha" and docs[1].content == "beta"


def test_reports_malformed_lines_with_numbers_and_keeps_the_rest(tmp_path):
    path = write(
        tmp_path,
        [
            json.dumps({"id": "a", "title": "A", "text": "alpha"}),
            "{not json",
            json.dumps(["a", "list"]),
            json.dumps({"title": "no id", "text": "x"}),
            json.dumps({"id": "c", "title": 3, "text": "x"}),
            json.dumps({"id": "b", "title": "B", "text": "beta"}),
        ],
    )
    report = CorpusReport()
    docs = read_corpus(path, report)
    assert [d.id for d in docs] == ["a", "b"]
    assert [n for n, _ in report.malformed] == [2, 3, 4, 5]
    assert "lines 2, 3, 4, 5" in report.summary()


def test_empty_text_is_skipped_and_first_duplicate_kept(tmp_path):
    path = write(
        tmp_path,
        [
            json.dumps({"id": "a", "title": "A", "text": "first"}),
            json.dumps({"id": "e", "title": "E", "text": "   "}),
            json.dumps({"id": "a", "title": "A2", "text": "second"}),
        ],
    )
    report = CorpusReport()
    docs = read_corpus(path, report)
    assert [(d.id, d.text) for d in docs] == [("a", "first")]
    assert report.empty == [2] and report.duplicates == [(3, "a")]


def test_missing_or_useless_corpus_is_one_clear_error(tmp_path):
    with pytest.raises(SunarError, match="corpus file not found"):
        read_corpus(tmp_path / "nope.jsonl")
    with pytest.raises(SunarError, match="no usable paragraphs.*malformed"):
        read_corpus(write(tmp_path, ["garbage", "more garbage"]))
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(SunarError, match="the file is empty"):
        read_corpus(empty)
