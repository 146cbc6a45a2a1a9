"""Every command line ends an error the same way: one line on stderr, the exit code asked."""

from __future__ import annotations

from core.cli import EXIT_FAILURE, EXIT_USAGE, error_exit


def test_an_error_is_one_line_on_stderr_and_the_code_asked(capsys):
    assert error_exit(ValueError("no such file: corpus.jsonl"), EXIT_USAGE) == 2
    assert error_exit("index damaged", EXIT_FAILURE) == 1

    out, err = capsys.readouterr()
    assert out == ""
    assert err == "error: no such file: corpus.jsonl\nerror: index damaged\n"
