"""Where threads are kept (sunar.server.checkpoints): the SQLite file by default, the --checkpoints option
before $SUNAR_CHECKPOINTS, and a PostgreSQL URL that cannot be used as one line saying what to do,
in the library and from both commands. tests/integration/test_postgres_threads.py runs a real
PostgreSQL server."""

import sqlite3
import sys

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver

from conftest import free_port
from sunar import cli
from sunar.errors import SunarError
from sunar.server.checkpoints import ENV, configured, default_path, open_checkpointer, shown


def test_the_option_wins_over_the_environment_which_wins_over_nothing(monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    assert configured("") == "" and configured("a.sqlite") == "a.sqlite"
    monkeypatch.setenv(ENV, "postgresql://db/threads")
    assert configured("") == "postgresql://db/threads" and configured("a.sqlite") == "a.sqlite"


def test_without_a_target_the_threads_go_to_the_sqlite_file_in_sunar_home(tmp_path, monkeypatch):
    monkeypatch.setenv("SUNAR_HOME", str(tmp_path / "home"))
    with open_checkpointer() as saver:
        assert isinstance(saver, SqliteSaver)
    assert default_path() == tmp_path / "home" / "checkpoints.sqlite"
    with sqlite3.connect(default_path()) as conn:
        assert {"checkpoints", "writes"} <= {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def test_a_file_that_is_no_database_is_one_line(tmp_path):
    (tmp_path / "notes.txt").write_text("not a database, " * 100)
    with pytest.raises(SunarError, match="notes.txt is not a checkpoint database .*pass another --checkpoints file"), open_checkpointer(tmp_path / "notes.txt"):
        pass


def unreachable() -> str:
    return f"postgresql://sunar:secret@127.0.0.1:{free_port()}/threads"


def test_a_postgresql_url_nobody_answers_is_one_line_without_the_password():
    url = unreachable()
    with pytest.raises(SunarError) as caught, open_checkpointer(url):
        pass
    message = str(caught.value)
    assert message.startswith(f"cannot use the checkpoint database {url.replace(':secret@', ':***@')} (connection")
    assert message.endswith("start PostgreSQL there, or pass another --checkpoints URL or file (SUNAR_CHECKPOINTS)")
    assert "\n" not in message and "secret" not in message


def test_shown_hides_only_the_password():
    assert shown("postgresql://u:p%40ss@h:5432/db?sslmode=require") == "postgresql://u:***@h:5432/db?sslmode=require"
    assert shown("postgresql://u@h/db") == "postgresql://u@h/db"


def test_without_the_postgres_extra_a_url_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if it were not installed: importing it raises ImportError
    with pytest.raises(SunarError, match=r"needs the postgres extra \(psycopg is not installed\): pip install 'sunar-graph\[postgres\]'"), \
            open_checkpointer("postgresql://127.0.0.1/threads"):
        pass


@pytest.mark.parametrize("command", [["serve-openai", "--port", "1"], ["ask", "Who directed Ronnie Rocket?", "--thread", "t1"]])
@pytest.mark.parametrize("by_option", [True, False])
def test_both_commands_say_in_one_line_that_the_database_does_not_answer(command, by_option, monkeypatch, capsys):
    url = unreachable()
    if by_option:
        monkeypatch.setenv(ENV, "postgresql://ignored.invalid/threads")  # the option wins
        command = [*command, "--checkpoints", url]
    else:
        monkeypatch.setenv(ENV, url)
    assert cli.main(command) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: cannot use the checkpoint database postgresql://sunar:***@127.0.0.1:") and "\n" not in err, err
