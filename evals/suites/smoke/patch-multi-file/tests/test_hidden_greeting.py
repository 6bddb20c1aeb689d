from greeting import cli
from greeting.core import greet


def test_greet_is_excited_by_default_and_calm_on_request():
    assert greet("Ada") == "Hello, Ada!"
    assert greet("Ada", excited=False) == "Hello, Ada."
    assert greet("  ", excited=False) == "Hello, stranger."


def test_the_cli_has_a_calm_flag(capsys):
    assert cli.main(["Bob"]) == 0
    assert cli.main(["Bob", "--calm"]) == 0
    assert capsys.readouterr().out == "Hello, Bob!\nHello, Bob.\n"
