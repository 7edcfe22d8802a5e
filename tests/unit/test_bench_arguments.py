"""The options the benchmark scripts share (``benchmarks/__init__.py``): where the questions and the
data come from, with one line when neither is given."""

import argparse

import pytest

from benchmarks import add_index_arguments, questions_file


def parsed(argv, **kwargs):
    parser = argparse.ArgumentParser()
    add_index_arguments(parser, **kwargs)
    return parser.parse_args(argv)


def test_questions_come_from_the_option_else_the_data_folders_dev_file(tmp_path, monkeypatch):
    monkeypatch.delenv("SUNAR_DATA", raising=False)
    assert str(questions_file(parsed(["--index", "i", "--questions", "q.jsonl"]))) == "q.jsonl"
    assert questions_file(parsed(["--index", "i", "--data", str(tmp_path)])) == tmp_path / "dev.jsonl"
    monkeypatch.setenv("SUNAR_DATA", str(tmp_path))
    assert questions_file(parsed(["--index", "i"], questions=False)) == tmp_path / "dev.jsonl"


def test_no_data_folder_is_one_line(tmp_path, monkeypatch):
    monkeypatch.delenv("SUNAR_DATA", raising=False)
    with pytest.raises(SystemExit, match="give --data DIR"):
        questions_file(parsed(["--index", "i"]))
    with pytest.raises(SystemExit, match="does not exist"):
        questions_file(parsed(["--index", "i", "--data", str(tmp_path / "nowhere")]))
