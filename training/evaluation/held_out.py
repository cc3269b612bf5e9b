"""Held-out tables: random valid rule sets that training never draws, for ``blackout bench generalist --held-out N``.

The draw (:func:`held_out_rules`) covers every option over its whole documented range:
3 to 7 players, 0 to 2 jokers, hands in any pattern (``down``, ``up``, ``up-down``,
``down-up``) up to what the deck deals (17 cards at 3 players, 18 with two jokers), a
named match length, or an explicit list of up to six hands (e.g. 12-8-4-1), every trump
and no-card-trump mode, ``lead_trump``, the hook on and off, a first dealer at a seat or
at random, and the scoring coefficients: exact bonus 0..20, points per bid 0..3, per
trick 0..2, miss points and miss points per trick -10..0. Every fourth table, starting
with the second, comes from the *per-trick* family, where points per trick taken (1 or
2) outweigh the bid: no points per bid and an exact bonus of at most five tricks' worth
(3 players, hands 12-8-4-1, trump must be broken, 1 point per trick and 5 for an exact
bid, random first dealer is one; it is also the named row ``held-out-12-8-4-1``,
:data:`NAMED_TABLES`). In both families a made bid outscores a miss of the same hand
(``exact_bonus > miss_points + miss_points_per_trick``, trick points aside; the scoring is
drawn again until it does): a table where bidding does not matter tests nothing.

The *long-hands* tables (:func:`held_out_long_table`, ``--held-out-long N``) are where a network
that rarely meets long hands in training is tested on them: 3 players with a longest hand of 14 to
17 cards, or 4 players with 13 (every card dealt), the hands in any pattern up from or down to
that one or a list that holds it, every other option and both scoring families as above (every
fourth table, from the second, per-trick). They draw from their own streams
(``spawn_key=(HELD_OUT_KEY, LONG_KEY, i)``), so table ``i`` of each kind is the same whatever else
is asked.

How the held-out draw is kept apart from training's
---------------------------------------------------
Training draws its random tables (:func:`blackout_training.ppo.tables.random_rules` and ``wide_rules``) from
``numpy.random.default_rng(s)`` for an integer ``s`` derived from the run seed: a
``SeedSequence(s)`` with an empty spawn key. Table ``i`` of held-out seed ``S`` draws from
``SeedSequence(S, spawn_key=(HELD_OUT_KEY, i))`` (:func:`held_out_generator`); numpy hashes
the spawn key into the generator's state with the entropy, which is what keeps the streams
of ``SeedSequence.spawn`` apart, and no part of training passes a spawn key. So the
held-out stream is another stream than training's for every seed, the same integer
included (two of them could only meet by a collision of numpy's 128-bit entropy hash;
``tests/test_held_out.py`` checks the states and the tables differ), and table ``i`` is the
same whatever the count asked. Training's ``"wide"`` tables
(:func:`blackout_training.ppo.tables.wide_rules`) draw from this same function, on
training's stream: the held-out tables are unseen tables of the distribution a run may
train on, not tables of another distribution.

On top of that the held-out seed itself must not be a training seed
(:func:`blackout_training.ppo.training_seeds.check_held_out_seed`), so that no reader has to take the stream argument on
trust: a *training seed* is the ``run.seed`` of a run that drew tables (``env.tables``
holding ``preset`` or ``random``), as recorded in the run configs of the checkout
(``configs/train/*.yaml``), in the configs kept inside the shipped checkpoints
(``training/agents/checkpoints/*.pt``) and inside the checkpoint of the policy under test
(``ppo:PATH``, or ``checkpoint=PATH``), following each checkpoint's
``model.init_checkpoint`` back as far as the files are at hand.
"""

from __future__ import annotations

import numpy as np

from blackout_env import Rules
from blackout_env.game.rules import MATCH_LENGTHS, PATTERNS, hand_schedule

__all__ = [
    "DEFAULT_HELD_OUT_SEED", "HELD_OUT_KEY", "LONG_KEY", "NAMED_TABLES", "held_out_generator", "held_out_long_table",
    "held_out_rows", "held_out_rules", "held_out_table", "rules_line",
]

HELD_OUT_KEY = 0x48454C44
"""The spawn key word of every held-out stream ("HELD" in ASCII); no training stream has a spawn key."""
DEFAULT_HELD_OUT_SEED = 1009
"""The held-out seed when ``--held-out-seed`` is not given (no training run uses it)."""
LONG_KEY = 0x4C4F4E47
"""The second spawn key word of the long-hands tables' streams ("LONG")."""
LONG_HANDS = (14, 17)
"""The longest hand of a 3-player long-hands table (at 4 players it is 13, every card dealt)."""
PER_TRICK_EVERY = 4
"""Table ``i`` is from the per-trick family when ``i % PER_TRICK_EVERY == 1`` (the 2nd, 6th, 10th, ...)."""
MAX_LISTED_HANDS = 6
"""The most hands of an explicit hand list."""
HAND_KINDS = (*PATTERNS, *MATCH_LENGTHS, "list")

NAMED_TABLES = {
    "held-out-12-8-4-1": Rules(
        num_players=3, hand_sizes=[12, 8, 4, 1], lead_trump="broken", exact_bonus=5, points_per_bid=0,
        points_per_trick=1, first_dealer="random",
    ),
}
"""Held-out tables by name, rows of ``--rows`` (and ``NAME-Np``): a per-trick table from a house game."""


def held_out_generator(seed: int, index: int, *family: int) -> np.random.Generator:
    """The random stream of held-out table ``index`` of ``seed`` (spawn key ``(HELD_OUT_KEY, index)``;
    the long tables' ``(HELD_OUT_KEY, LONG_KEY, index)``)."""
    key = (HELD_OUT_KEY, *family, index)
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=key)))


def held_out_table(rng: np.random.Generator, per_trick: bool) -> Rules:
    """One valid rule set over every option's documented range (see the module); ``per_trick``: that family."""
    players = int(rng.integers(3, 8))
    jokers = int(rng.choice([0, 0, 1, 2]))
    full = (52 + jokers) // players  # the most cards the deck deals each player
    kind = str(rng.choice(HAND_KINDS))
    hands: dict = {"hand_sizes": kind}
    if kind in PATTERNS:
        hands["max_hand_size"] = int(rng.integers(1, full + 1))
    elif kind == "list":
        hands["hand_sizes"] = [int(size) for size in rng.integers(1, full + 1, size=int(rng.integers(1, MAX_LISTED_HANDS + 1)))]
    return Rules(num_players=players, jokers=jokers, **hands, **_options(rng, players), **_scoring(rng, per_trick))


def held_out_long_table(rng: np.random.Generator, per_trick: bool) -> Rules:
    """One valid rule set with long hands (see the module): 3 players and a hand of 14-17 cards, or 4 players and 13."""
    players = int(rng.integers(3, 5))
    jokers = int(rng.choice([0, 0, 1, 2]))
    full = (52 + jokers) // players
    longest = int(rng.integers(LONG_HANDS[0], LONG_HANDS[1] + 1)) if players == 3 else full
    kind = str(rng.choice([*PATTERNS, "list"]))
    hands: dict = {"hand_sizes": kind, "max_hand_size": longest}
    if kind == "list":
        # Up to the longest a table of the kind deals (at 3 players, 18 cards with two jokers would be longer).
        others = rng.integers(1, min(full, LONG_HANDS[1]) + 1, size=int(rng.integers(0, MAX_LISTED_HANDS)))
        hands = {"hand_sizes": [longest, *(int(size) for size in others)]}
    return Rules(num_players=players, jokers=jokers, **hands, **_options(rng, players), **_scoring(rng, per_trick))


def _options(rng: np.random.Generator, players: int) -> dict:
    return dict(
        hook=bool(rng.integers(2)),
        trump=str(rng.choice(["turned", "none", "rotating"])),
        no_card_trump=str(rng.choice(["none", "dealer_last"])),
        lead_trump=str(rng.choice(["any", "broken"])),
        first_dealer="random" if rng.integers(2) else int(rng.integers(players)),
    )


def _scoring(rng: np.random.Generator, per_trick: bool) -> dict:
    while True:
        if per_trick:
            trick = int(rng.integers(1, 3))
            scoring = dict(points_per_trick=trick, points_per_bid=0, exact_bonus=int(rng.integers(0, 5 * trick + 1)),
                           miss_points=int(rng.integers(-5, 1)), miss_points_per_trick=int(rng.integers(-2, 1)))
        else:
            scoring = dict(exact_bonus=int(rng.integers(0, 21)), points_per_bid=int(rng.integers(0, 4)),
                           points_per_trick=int(rng.integers(0, 3)), miss_points=int(rng.integers(-10, 1)),
                           miss_points_per_trick=int(rng.integers(-10, 1)))
        if scoring["exact_bonus"] > scoring["miss_points"] + scoring["miss_points_per_trick"]:
            return scoring  # a made bid outscores a miss: bidding matters


def held_out_rules(seed: int, count: int, long: bool = False) -> list[tuple[str, Rules]]:
    """The first ``count`` held-out tables of ``seed``, each with its family (``"general"`` or ``"per-trick"``).

    ``long``: the long-hands tables instead (:func:`held_out_long_table`, their own stream), families
    ``"long"`` and ``"long-per-trick"``.
    """
    tables = []
    for index in range(count):
        per_trick = index % PER_TRICK_EVERY == 1
        if long:
            family = "long-per-trick" if per_trick else "long"
            rng = held_out_generator(seed, index, LONG_KEY)
            tables.append((family, held_out_long_table(rng, per_trick)))
        else:
            family = "per-trick" if per_trick else "general"
            tables.append((family, held_out_table(held_out_generator(seed, index), per_trick)))
    return tables


def held_out_rows(seed: int, count: int, long: bool = False) -> list[tuple[str, str, Rules]]:
    """``(row name, family, rules)`` of the first ``count`` held-out tables: ``held-out-SEED-I``, ``...-per-trick``.

    ``long``: the long-hands tables, ``held-out-long-SEED-I`` (``...-per-trick``).
    """
    prefix = "held-out-long" if long else "held-out"
    return [
        (f"{prefix}-{seed}-{index + 1}" + ("-per-trick" if family.endswith("per-trick") else ""), family, rules)
        for index, (family, rules) in enumerate(held_out_rules(seed, count, long))
    ]


def _hands_text(sizes: tuple[int, ...]) -> str:
    if len(sizes) > 5:
        for pattern in PATTERNS:
            if sizes == hand_schedule(pattern, max(sizes)):
                return f"{pattern} {max(sizes)}"
    return "-".join(str(size) for size in sizes)


def rules_line(rules: Rules) -> str:
    """Every option of ``rules`` in one short line (the full rules: ``Rules.describe``)."""
    trump = {
        "turned": "turned trump (" + ("else dealer's last card" if rules.no_card_trump == "dealer_last" else "else none") + ")",
        "none": "no trump",
        "rotating": "rotating trump",
    }[rules.trump]
    dealer = "random" if rules.first_dealer == "random" else f"seat {rules.first_dealer}"
    return ", ".join([
        f"{rules.num_players}p", f"hands {_hands_text(rules.hand_sizes)}", f"{rules.jokers} joker{'' if rules.jokers == 1 else 's'}", trump,
        "trump must break" if rules.lead_trump == "broken" else "trump leads any time",
        "hook on" if rules.hook else "hook off",
        f"exact {rules.exact_bonus} + {rules.points_per_bid}/bid",
        f"miss {rules.miss_points} {rules.miss_points_per_trick:+d}/trick missed",
        f"{rules.points_per_trick}/trick taken", f"first dealer {dealer}",
    ])


