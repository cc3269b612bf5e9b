"""Find obvious positions in played games and write them as a suite (how training/evaluation/positions.yaml was made).

Deals whose cards are all dealt (so few cards stay unseen near the end of a hand) at 3 to 7
players, and one-card hands at 3 players, are played by a mix of the heuristic and random
bots; at every decision the verifier can search (a bid in a one-card hand, a play with at most
two cards in hand), the acting seat's best actions in every layout are tried as the acceptable
set, and the position is kept when the verifier proves it and it leaves some legal action out.
Usage: python docs/data/make_positions.py OUT.yaml [PER_TABLE] [SEED] [GAMES_PER_TABLE]

``--add SUITE.yaml PLAYERS HAND_SIZE COUNT SEED GAMES MOST_LAYOUTS`` appends to a suite instead
(numbered after its positions, the command added to its header): up to COUNT positions of one
table (standard rules), found in GAMES games from SEED, each searched over at most MOST_LAYOUTS
layouts (small searches keep the suite quick to load). The 7-player positions were added so: at 7
players two cards stay undealt, so only positions late in the hand, where the voids shown cut the
layouts, are within the verifier's bound.

``--add-round SUITE.yaml PLAYERS ROUND COUNT SEED GAMES MOST_LAYOUTS`` does the same for hand ROUND of a
match under the standard rules' own schedule at PLAYERS (10 down to 1 at 4 players): the positions
carry ``round``, so a specialist of that table (``ppo-standard``) can be asked them.
"""

from __future__ import annotations

import sys

import numpy as np
import yaml
from blackout_training.agents.policies import load_policy
from blackout_training.evaluation.positions import (
    MAX_LAYOUTS,
    Position,
    PositionError,
    action_text,
    layout_count,
    search,
    verify,
)

from blackout_env.game.engine import BlackoutGame
from blackout_env.game.rules import Rules
from blackout_env.game.rules_logic import dealer_of_round

# (players, hand size, rules overrides): full decks at every table size, and one-card hands at 3 players
DEALER = {"no_card_trump": "dealer_last"}  # a full deck turns no card: the dealer's last card names trump
TABLES = [
    (3, 1, {}), (3, 17, DEALER), (4, 13, DEALER), (5, 10, {}), (6, 8, {}), (7, 7, {}),
    (4, 13, {}), (6, 9, {"jokers": 2, **DEALER}), (4, 13, {"points_per_trick": 1, **DEALER}),
]


def _need_words(game: BlackoutGame, seat: int) -> str:
    bid, won = game.bids[seat], game.tricks_won[seat]
    if bid is None:
        return "bids in a one-card hand"
    if won > bid:
        return f"its bid of {bid} is already lost ({won} taken)"
    if won == bid:
        return f"has made its bid of {bid}"
    return f"needs {bid - won} more trick{'s' if bid - won > 1 else ''}"


def candidates(
    players: int, hand_size: int, overrides: dict, games: int, rng: np.random.Generator, most_layouts: int = MAX_LAYOUTS,
    round_index: int | None = None,
) -> list[Position]:
    """Positions found in ``games`` deals of one table: a one-hand table of ``hand_size`` cards, or (with
    ``round_index``) that hand of a match under the rules' own schedule (``hand_size`` is then the schedule's)."""
    if round_index is None:
        rules = Rules.preset("standard").replace(num_players=players, hand_sizes=[hand_size], **overrides)
    else:
        rules = Rules.preset("standard").replace(num_players=players, **overrides)
        hand_size = rules.hand_sizes[round_index]
    bots = [load_policy("heuristic", rules, 0), load_policy("random", rules, 0)]
    found: list[Position] = []
    for number in range(games):
        order = rng.permutation(rules.deck_size).tolist()
        dealer = int(rng.integers(players))
        if round_index is None:
            start = BlackoutGame(rules, decks=[order], first_dealer=dealer)
        else:
            start = BlackoutGame(rules, seed=0, decks={round_index: order}, start_round=round_index,
                                 first_dealer=dealer_of_round(dealer, -round_index, players))
        hands = [list(hand) for hand in start.hands]
        game = start.clone()
        seated = [bots[int(rng.random() < 0.3)] for _ in range(players)]
        while not game.round_scores:
            seat = game.current_player
            searchable = (game.phase == "bid" and hand_size == 1) or (game.phase == "play" and len(game.hands[seat]) <= 2)
            if searchable and len(game.legal_actions()) > 1:
                # With "dealer_last" the trump card is the dealer's own last card, not one turned from the deck.
                turned = start.turned_card if all(start.turned_card not in hand for hand in hands) else None
                position = Position(f"t{players}-{hand_size}-{number}-{len(game.actions)}", rules, start.dealer, hands,
                                    turned, list(game.actions), [], "", round=round_index)
                kept = _prove(position, game, seat, most_layouts)
                if kept is not None:
                    found.append(kept)
            game.step(seated[seat].act(game.view(seat)))
    return found


def _prove(position: Position, game: BlackoutGame, seat: int, most_layouts: int = MAX_LAYOUTS) -> Position | None:
    try:
        outcomes = search(position, most_layouts)
    except PositionError:
        return None
    legal = list(outcomes)
    searched = len(outcomes[legal[0]])
    best = [max(outcomes[a][i][0] for a in legal) for i in range(searched)]
    acceptable = [a for a in legal if all(outcomes[a][i][0] == best[i] for i in range(searched))]
    if not acceptable or len(acceptable) == len(legal):
        return None
    rules = position.rules
    words = " or ".join(action_text(a, rules) for a in acceptable)
    position.acceptable = acceptable
    layouts = layout_count(position)
    kinds = f" (of {searched} kind{'s' if searched > 1 else ''} that the trick can tell apart)" if searched < layouts else ""
    position.reason = (
        f"{_need_words(game, seat)}: in all {layouts} layouts of the unseen cards{kinds} {words} scores at least what "
        "any other action could, whatever the others play, and more in some"
    )
    try:
        verify(position)
    except PositionError:
        return None
    return position


def add_table(path: str, players: int, hand_size: int, count: int, seed: int, games: int, most_layouts: int,
              round_index: int | None = None) -> None:
    """Append up to ``count`` positions of one table to the suite at ``path`` (see the module docstring)."""
    with open(path, encoding="utf-8") as file:
        text = file.read()
    header = "".join(line + "\n" for line in text.splitlines() if line.startswith("#"))
    existing = yaml.safe_load(text)["positions"]
    found = candidates(players, hand_size, {}, games=games, rng=np.random.default_rng(seed), most_layouts=most_layouts,
                       round_index=round_index)
    if round_index is not None:  # one position per view of the acting seat (the unseen cards may differ)
        views: dict[str, Position] = {}
        for position in found:
            views.setdefault(position.describe(), position)
        found = list(views.values())
    # a mix of what the acting seat needs (a trick more, none more...): in turn from each kind, in the order found
    kinds: dict[str, list[Position]] = {}
    for position in found:
        kinds.setdefault(position.reason.split(":")[0].split(" of ")[0], []).append(position)
    print({kind: len(positions) for kind, positions in kinds.items()})
    queues = list(kinds.values())
    picked = [queue[i] for i in range(len(found)) for queue in queues if i < len(queue)][:count]
    chosen = [position for position in found if position in picked]
    size = len(found[0].hands[0]) if found else hand_size
    print(f"{players} players, hand {size}: {len(found)} found, {len(chosen)} kept")
    for index, position in enumerate(chosen, start=len(existing)):
        position.id = f"p{index + 1:03d}-{players}p-{size}c" + ("" if round_index is None else f"-r{round_index}")
    header += "# Added by: python docs/data/make_positions.py " + " ".join(sys.argv[1:]) + "\n"
    suite = existing + [p.to_dict() for p in chosen]
    text = yaml.safe_dump({"positions": suite}, sort_keys=False, width=120, allow_unicode=True)
    with open(path, "w", encoding="utf-8") as file:
        file.write(header + text)
    print(f"wrote {len(suite)} positions to {path}")


if __name__ == "__main__":
    if sys.argv[1] == "--add":
        add_table(sys.argv[2], *(int(value) for value in sys.argv[3:9]))
        sys.exit(0)
    if sys.argv[1] == "--add-round":
        players, round_index, *rest = (int(value) for value in sys.argv[3:9])
        add_table(sys.argv[2], players, 0, *rest, round_index=round_index)
        sys.exit(0)
    out = sys.argv[1]
    per_table = int(sys.argv[2]) if len(sys.argv) > 2 else 12
    rng = np.random.default_rng(int(sys.argv[3]) if len(sys.argv) > 3 else 0)
    games = int(sys.argv[4]) if len(sys.argv) > 4 else 40
    suite = []
    for players, hand_size, overrides in TABLES:
        found = candidates(players, hand_size, overrides, games=games, rng=rng)
        picks = rng.permutation(len(found))[:per_table]
        chosen = [found[i] for i in sorted(picks)]
        print(f"{players} players, hand {hand_size}, {overrides or 'standard'}: {len(found)} found, {len(chosen)} kept")
        suite += chosen
    for index, position in enumerate(suite):
        position.id = f"p{index + 1:03d}-{position.rules.num_players}p-{len(position.hands[0])}c"
    header = "# Obvious positions, each proved by exhaustive search when loaded (docs/positions.md).\n"
    header += "# Made by: python docs/data/make_positions.py " + " ".join(sys.argv[1:]) + "\n"
    text = yaml.safe_dump({"positions": [p.to_dict() for p in suite]}, sort_keys=False, width=120, allow_unicode=True)
    with open(out, "w", encoding="utf-8") as file:
        file.write(header + text)
    print(f"wrote {len(suite)} positions to {out}")
