"""What one player may know: :class:`PlayerView`.

Bots, the observation encoder and front-ends act on a view, never on the
engine, so nothing they compute can depend on other players' hidden cards.
"""

from __future__ import annotations

from dataclasses import dataclass

from .rules import Rules
from .rules_logic import bid_out_of_reach, forbidden_bid

__all__ = ["PlayerView"]


@dataclass(frozen=True, slots=True)
class PlayerView:
    """One player's knowledge of the game at one moment.

    Seats are absolute (0..n-1). "This hand" means the current deal.
    """

    player: int
    """The seat this view belongs to."""
    rules: Rules
    phase: str
    """"bid", "play" or "game_over"."""
    current_player: int | None
    """The seat to act, None when the game is over."""
    round_index: int
    hand_size: int
    dealer: int
    hand: tuple[int, ...]
    """This player's cards, ascending."""
    trump: int | None
    """Trump suit 0..3 (C D H S), or None for no trump."""
    turned_card: int | None
    """The card that named trump, if any."""
    turned_card_held_by_dealer: bool
    """True when no card was left to turn and the dealer's last card was shown instead."""
    bids: tuple[int | None, ...]
    tricks_won: tuple[int, ...]
    current_trick: tuple[tuple[int, int], ...]
    """(seat, card) in the order played."""
    leader: int
    """The seat that led (or will lead) the current trick."""
    led_suit: int | None
    last_trick: tuple[tuple[int, int], ...]
    """The previous trick of this hand, empty before the first trick is complete."""
    last_trick_winner: int | None
    played: tuple[tuple[int, ...], ...]
    """Cards each seat has played this hand (current trick included)."""
    voids: tuple[frozenset[int], ...]
    """Suits each seat has shown it does not hold."""
    trump_broken: bool
    scores: tuple[int, ...]
    round_scores: tuple[tuple[int, ...], ...]
    legal_actions: tuple[int, ...]
    """The player's legal actions when it is their turn, else empty."""
    round_actions: tuple[int, ...]
    """Every action taken this hand so far (bids then plays), all public."""

    # ----------------------------------------------------------------- derived
    @property
    def num_players(self) -> int:
        return self.rules.num_players

    @property
    def num_cards(self) -> int:
        """Card actions (52 or 54); bid k is action ``num_cards + k``."""
        return self.rules.num_cards

    @property
    def tricks_left(self) -> int:
        """Tricks not yet won by anyone this hand (the current one included)."""
        return self.hand_size - sum(self.tricks_won)

    @property
    def position(self) -> int:
        """Bidding position: 0 for the dealer's left (first to bid) .. n-1 for the dealer."""
        return (self.player - self.dealer - 1) % self.rules.num_players

    @property
    def is_dealer(self) -> bool:
        return self.player == self.dealer

    @property
    def is_my_turn(self) -> bool:
        return self.current_player == self.player

    @property
    def bid_impossible(self) -> tuple[bool, ...]:
        """Per seat: the bid can no longer be made (took too many, or too few tricks remain)."""
        left = self.tricks_left
        return tuple(
            bid is not None and bid_out_of_reach(bid, won, left)
            for bid, won in zip(self.bids, self.tricks_won)
        )

    @property
    def forbidden_bid(self) -> int | None:
        """The bid the hook forbids the dealer, once every other seat has bid; else None.

        See :func:`~blackout_env.game.rules_logic.forbidden_bid`.
        """
        if self.phase != "bid" or self.current_player != self.dealer:
            return None
        return forbidden_bid(self.hand_size, sum(b for b in self.bids if b is not None), hook=self.rules.hook)

    def cards_left(self, seat: int) -> int:
        """Cards still in a seat's hand."""
        return self.hand_size - len(self.played[seat])

    @property
    def shown_cards(self) -> tuple[tuple[int, ...], ...]:
        """Per seat, cards everyone knows that seat still holds (the dealer's shown card)."""
        shown: list[tuple[int, ...]] = [() for _ in range(self.rules.num_players)]
        card = self.turned_card
        if self.turned_card_held_by_dealer and card is not None and card not in self.played[self.dealer]:
            shown[self.dealer] = (card,)
        return tuple(shown)

    @property
    def unseen_cards(self) -> tuple[int, ...]:
        """Cards whose place this player cannot know: in other hands or out of play."""
        known = set(self.hand)
        for cards in self.played:
            known.update(cards)
        if self.turned_card is not None:
            known.add(self.turned_card)
        return tuple(c for c in range(self.rules.deck_size) if c not in known)
