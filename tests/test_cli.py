"""The ``blackout`` command runs end to end."""

import subprocess
import sys

from blackout_training.cli import main


def test_rules_prints_the_standard_preset_in_words(capsys):
    assert main(["rules", "standard"]) == 0
    out = capsys.readouterr().out
    assert "Dealer's hook" in out and "10, 9, 8" in out


def test_rules_list_names_every_preset(capsys):
    assert main(["rules", "--list"]) == 0
    names = capsys.readouterr().out.split()
    assert {"standard", "no-trump", "trump-must-break", "full-deck", "minus-scoring", "short", "long"} <= set(names)


def test_unknown_preset_is_a_clear_error(capsys):
    assert main(["rules", "no-such-preset"]) == 2
    assert "unknown rules preset 'no-such-preset'" in capsys.readouterr().err


def test_demo_prints_a_score_sheet_through_the_console_script():
    result = subprocess.run(
        [sys.executable, "-m", "blackout_training.cli", "demo", "--seed", "3"], capture_output=True, text=True, check=True
    )
    assert "total" in result.stdout and "winner" in result.stdout
