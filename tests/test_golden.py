"""Golden playthroughs: whole recorded matches compared line by line.

Each golden file is the :func:`transcript` of a match dealt from a fixed seed
and played by a fixed deterministic policy. Any change in dealing, legality,
trick winners or scoring shows up here as a readable diff. After an intended
change of behaviour, regenerate with::

    BLACKOUT_REGENERATE_GOLDEN=1 pytest tests/test_golden.py

and review the diff of tests/golden/ before committing it.
"""

import os
from pathlib import Path

import pytest

from blackout_env import BlackoutGame, Rules
from blackout_env.game.scoresheet import transcript

GOLDEN_DIR = Path(__file__).parent / "golden"

GOLDEN_GAMES = {
    "standard_4p_seed7.txt": (Rules.preset("standard"), 7),
    "jokers_trump_must_break_6p_seed11.txt": (
        Rules(
            num_players=6,
            hand_sizes=[9, 3],
            jokers=2,
            lead_trump="broken",
            no_card_trump="dealer_last",
            miss_points=-10,
        ),
        11,
    ),
    "rotating_trump_no_hook_per_trick_5p_seed3.txt": (
        Rules(
            num_players=5,
            hand_sizes="short",
            trump="rotating",
            hook=False,
            exact_bonus=10,
            points_per_bid=0,
            points_per_trick=1,
            miss_points_per_trick=-1,
            first_dealer="random",
        ),
        3,
    ),
}


def cycling_policy(game: BlackoutGame) -> int:
    """A deterministic policy that still varies: the k-th action takes legal[k % number legal]."""
    legal = game.legal_actions()
    return legal[len(game.actions) % len(legal)]


def recorded_match(rules: Rules, seed: int) -> str:
    game = BlackoutGame(rules, seed=seed)
    while not game.is_over:
        game.step(cycling_policy(game))
    return transcript(game)


@pytest.mark.parametrize("name", sorted(GOLDEN_GAMES))
def test_match_matches_its_golden_transcript(name):
    rules, seed = GOLDEN_GAMES[name]
    actual = recorded_match(rules, seed).splitlines()
    path = GOLDEN_DIR / name
    if os.environ.get("BLACKOUT_REGENERATE_GOLDEN"):
        path.write_text("\n".join(actual) + "\n", encoding="utf-8")
        pytest.skip(f"regenerated {path}")
    expected = path.read_text(encoding="utf-8").splitlines()
    for number, (want, got) in enumerate(zip(expected, actual), start=1):
        assert got == want, f"{name} line {number} differs"
    assert len(actual) == len(expected), f"{name}: {len(actual)} lines, golden has {len(expected)}"


def test_a_golden_transcript_records_every_deal_trick_and_score():
    text = (GOLDEN_DIR / "standard_4p_seed7.txt").read_text(encoding="utf-8")
    assert text.count("\nHand ") == 10
    assert text.count("  Trick ") == sum(range(1, 11))
    assert text.count("  Bids: ") == text.count("  Scores: ") == text.count("  Totals: ") == 10
    assert text.rstrip().splitlines()[-1].startswith("Winners: ")
