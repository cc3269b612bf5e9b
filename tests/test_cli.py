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


def test_six_and_seven_players_work_with_the_default_rules(tmp_path, capsys):
    import blackout_env

    seven = blackout_env.env(rules={"num_players": 7})
    seven.reset(seed=0)
    assert seven.unwrapped.game.hand_size == 7 and len(seven.agents) == 7
    assert main(["demo", "--players", "7", "--seed", "1"]) == 0
    assert "A match of 7 random players (7 hands)" in capsys.readouterr().out
    save = tmp_path / "six.json"
    assert main(["play", "--players", "6", "--humans", "0", "--bots", "random", "--seed", "2", "--save", str(save)]) == 0
    assert "Game over" in capsys.readouterr().out
    assert main(["eval", "--players", "7", "--policies", "random", "heuristic", "--deals", "1", "--hands",
                 "--no-progress"]) == 0
    assert "heuristic" in capsys.readouterr().out


def test_a_rules_path_that_is_a_folder_is_a_one_line_error(capsys):
    assert main(["demo", "--rules", "/etc"]) == 2
    err = capsys.readouterr().err
    assert "rules file '/etc' is a folder" in err and "Traceback" not in err
