"""Hypothesis strategies for random valid rules, shared by the property and differential tests."""

from hypothesis import strategies as st

from blackout_env import Rules


@st.composite
def rules_with(draw, players, jokers, sizes) -> Rules:
    """Rules for a table and a hand schedule, every other option drawn."""
    return Rules(
        num_players=players,
        hand_sizes=sizes,
        hook=draw(st.booleans()),
        trump=draw(st.sampled_from(["turned", "none", "rotating"])),
        no_card_trump=draw(st.sampled_from(["none", "dealer_last"])),
        lead_trump=draw(st.sampled_from(["any", "broken"])),
        exact_bonus=draw(st.integers(0, 20)),
        points_per_bid=draw(st.integers(0, 3)),
        miss_points=draw(st.integers(-20, 0)),
        miss_points_per_trick=draw(st.integers(-3, 0)),
        points_per_trick=draw(st.integers(0, 2)),
        jokers=jokers,
        first_dealer=draw(st.sampled_from(["random", *range(players)])),
    )


@st.composite
def any_rules(draw, max_size: int | None = None) -> Rules:
    """Any valid rules: 3..7 players, 0..2 jokers, up to 3 hands (the full deck often among them).

    ``max_size`` caps the hand sizes other than the full deck (shorter games for slow checks).
    """
    players = draw(st.integers(3, 7))
    jokers = draw(st.integers(0, 2))
    full = (52 + jokers) // players
    size = st.one_of(st.just(full), st.integers(1, full if max_size is None else min(full, max_size)))
    sizes = draw(st.lists(size, min_size=1, max_size=3))
    return draw(rules_with(players, jokers, sizes))


@st.composite
def full_deck_rules(draw) -> Rules:
    """Tables where the whole deck is dealt (no card left to turn), with jokers: rare cases made common."""
    players, jokers = draw(st.sampled_from([(4, 0), (3, 2), (6, 2)]))
    return draw(rules_with(players, jokers, [(52 + jokers) // players]))
