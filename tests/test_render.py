"""Rendering: the text table shows what the viewer may know; the image has a fixed shape for videos."""

from __future__ import annotations

import re

import numpy as np
import pytest

from blackout_env import BlackoutGame, Rules, raw_env
from blackout_env.game.cards import card_to_str
from blackout_env.game.render import render_image, render_text


def game_in_second_trick():
    rules = Rules.resolve({"hand_sizes": [4], "hook": False})
    game = BlackoutGame(rules, seed=21)
    for bid in (0, 0, 0, 0):
        game.bid(bid)
    for _ in range(5):  # one whole trick, then the lead of the next
        game.step(game.legal_actions()[0])
    return game


def test_text_table_shows_trump_bids_tricks_scores_and_tricks():
    game = game_in_second_trick()
    text = render_text(game.view(1))
    assert f"turned: {card_to_str(game.turned_card)}" in text
    assert "Round 1/1" in text and "hand of 4" in text
    winner = game.last_trick_winner
    assert f"won by player_{winner}" in text
    seat, card = game.current_trick[0]
    assert f"player_{seat} {card_to_str(card)}" in text and "led: " + ["clubs", "diamonds", "hearts", "spades"][card // 13] in text
    # the trick's winner bid 0 and took a trick: b/o (the bid is out of reach)
    row = next(line for line in text.splitlines() if line.startswith(f"player_{winner} "))
    assert row.rstrip().endswith("b/o")
    assert sum(line.rstrip().endswith("b/o") for line in text.splitlines()) == 1


def test_text_table_shows_only_the_viewers_hand_unless_spectating():
    game = game_in_second_trick()
    text = render_text(game.view(2))
    assert "hand of player_2: " in text and "hand of player_0" not in text
    other = game.hands[0][0]
    assert card_to_str(other) not in text.split("hand of player_2: ")[1]
    spectator = render_text(game.view(2), hands=game.hands)
    assert all(f"hand of player_{seat}" in spectator for seat in range(4))


def card_names_in(text: str) -> set[int]:
    """Every card named anywhere in a text, as a separate word (2C, 10H, JK1...)."""
    names = {card_to_str(card): card for card in range(54)}
    return {names[word] for word in re.findall(r"[A-Za-z0-9]+", text) if word in names}


@pytest.mark.parametrize(
    "rules",
    [
        Rules(hand_sizes=[5, 3, 1]),
        Rules(num_players=3, hand_sizes=[4, 2], jokers=2),
        Rules(num_players=4, hand_sizes=[13], no_card_trump="dealer_last"),
    ],
)
def test_no_card_hidden_from_the_viewer_appears_anywhere_in_its_table(rules):
    game = BlackoutGame(rules, seed=5)
    rng = np.random.default_rng(0)
    checked = 0
    while not game.is_over:
        for seat in range(game.num_players):
            view = game.view(seat)
            shown = {c for cards in view.shown_cards for c in cards}
            hidden = {c for other in range(game.num_players) if other != seat for c in game.hands[other]} - shown
            named = card_names_in(render_text(view))
            assert not named & hidden, (seat, sorted(map(card_to_str, named & hidden)))
            assert set(view.hand) <= named  # the viewer's own hand is drawn
            checked += 1
        legal = game.legal_actions()
        game.step(legal[int(rng.integers(len(legal)))])
    assert checked > 50


def test_human_mode_prints_the_table(capsys):
    e = raw_env(render_mode="human", render_seat=3)
    e.reset(seed=0)
    assert e.render() is None
    assert "hand of player_3" in capsys.readouterr().out


def test_image_is_rgb_with_one_shape_for_a_whole_game():
    e = raw_env(rules={"hand_sizes": [3, 1]}, render_mode="rgb_array", spectator=True)
    e.reset(seed=0)
    shapes = set()
    frames = 0
    while not all(e.terminations.values()):
        frame = e.render()
        assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
        shapes.add(frame.shape)
        frames += 1
        e.step(int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[0]))
    shapes.add(e.render().shape)
    assert len(shapes) == 1 and frames > 10
    assert len(np.unique(frame.reshape(-1, 3), axis=0)) > 3  # felt, ink and cards, not a blank picture


def test_image_of_a_view_draws_the_cards():
    game = game_in_second_trick()
    plain = render_image(game.view(0))
    spectator = render_image(game.view(0), hands=game.hands)
    assert spectator.shape[0] > plain.shape[0]  # one row of cards per seat


def test_render_without_a_mode_warns_and_before_reset_is_an_error():
    e = raw_env()
    with pytest.warns(UserWarning, match="render_mode"):
        assert e.render() is None
    with pytest.raises(RuntimeError, match="before reset"):
        raw_env(render_mode="ansi").render()
