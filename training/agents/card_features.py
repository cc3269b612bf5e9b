"""Per-card features computed from the documented observation, for the card-aware network.

An MLP on the flat observation has to discover by itself, from hundreds of
thousands of games, facts that a player reads off the table at a glance: that
this queen is now the highest card of its suit still out, that this seven
beats the trick so far, that the seat to my left is void in hearts. The
``"cards"`` architecture of :mod:`blackout_training.agents.policy_net` gives it these facts
for every card, as a small feature vector computed from the observation itself
(nothing that the observation does not hold, so a policy still acts from the
player's view only), and scores each card action from that card's features
and the state; the same small network reads every card.

Features of card ``c`` (columns of :meth:`CardFeatures.__call__`'s output):

====  ===========================================================================
0     the observer holds ``c``
1     ``c`` is unseen: not in the hand, not played this hand, not the turned card
2     ``c`` lies in the current trick
3     ``c`` is a trump (jokers count as trumps)
4     ``c`` is of the led suit
5     rank / 12 (2 = 0 .. ace = 1; jokers 1)
6     unseen cards of ``c``'s suit that outrank it / 12
7     the observer's cards of ``c``'s suit that outrank it / 12
8     the observer's cards of ``c``'s suit that it outranks / 12
9     the observer's cards of ``c``'s suit / 13
10    unseen cards of ``c``'s suit / 13
11    ``c`` played now would win the trick so far (1 when the trick is empty)
12..  for each other seat, clockwise: it has shown a void in ``c``'s suit
====  ===========================================================================

With the universal observation (``CardFeatures(rules, observation="universal")``,
:mod:`blackout_env.game.universal`) the same features are read from the universal
blocks: 54 cards and 6 other seats (an absent seat shows no void), and whether
the jokers exist is read from the observation's ``jokers`` block, so one
network serves every table.

"Would win" compares :func:`blackout_env.game.rules_logic.card_power` (the rules'
trick power, read from a table built by that function) with the best power in
the trick, so a card of equal power, i.e. a second joker, does not win.
"""

from __future__ import annotations

import torch
from torch import nn

from blackout_env import Rules
from blackout_env.game import encoding
from blackout_env.game.cards import NUM_STANDARD_CARDS
from blackout_env.game.rules_logic import card_power
from blackout_env.game.universal import MAX_PLAYERS, UNIVERSAL_CARDS, observation_kind, universal_layout

__all__ = ["CardFeatures"]


class CardFeatures(nn.Module):
    """Maps observations (batch, observation_size) to per-card features (batch, num_cards, num_features)."""

    def __init__(self, rules: Rules | None, observation: str = "rules") -> None:
        super().__init__()
        self.universal = observation_kind(observation) == "universal"
        if self.universal:  # every table: the largest one; the jokers' existence is read per observation
            self.num_players, self.num_cards, deck_size = MAX_PLAYERS, UNIVERSAL_CARDS, UNIVERSAL_CARDS
            layout = universal_layout()
        else:
            self.num_players = rules.num_players
            self.num_cards = rules.num_cards  # card actions: 52, or 54 with jokers
            deck_size = rules.deck_size
            layout = encoding.observation_layout(rules)
        self.num_features = 12 + (self.num_players - 1)
        self.blocks = {block.name: (block.offset, block.size) for block in layout}
        cards = torch.arange(self.num_cards)
        standard = cards < NUM_STANDARD_CARDS
        suit = torch.where(standard, cards // 13, torch.full_like(cards, 4))
        rank = torch.where(standard, cards % 13, torch.full_like(cards, 13))
        self.register_buffer("suit", suit, persistent=False)
        # With one joker the card actions still run to 53, but card 53 does not exist: never unseen.
        self.register_buffer("exists", (cards < deck_size).float(), persistent=False)
        self.register_buffer("rank_feature", torch.where(standard, rank / 12.0, torch.ones(self.num_cards)),
                             persistent=False)
        # power[trump column, led column, card]: the trick power of every card, with the columns of the
        # observation's one-hot "trump" and "led_suit" blocks (4: no trump, no suit led yet)
        suits = [0, 1, 2, 3, None]
        power = [[[card_power(card, led, trump) for card in range(self.num_cards)] for led in suits] for trump in suits]
        self.register_buffer("power", torch.tensor(power, dtype=torch.float32), persistent=False)

    def block(self, obs: torch.Tensor, name: str, *shape: int) -> torch.Tensor:
        offset, size = self.blocks[name]
        return obs[:, offset : offset + size].reshape(obs.shape[0], *shape)

    def _per_suit(self, cards: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """For 0/1 card sets (batch, C): per card, the set's cards of its suit above it, below it, and in all."""
        batch = cards.shape[0]
        grid = cards[:, :NUM_STANDARD_CARDS].reshape(batch, 4, 13)
        below = torch.cumsum(grid, dim=2) - grid  # strictly lower ranks
        total = grid.sum(dim=2, keepdim=True)
        above = total - below - grid
        pad = self.num_cards - NUM_STANDARD_CARDS

        def flat(x: torch.Tensor) -> torch.Tensor:
            x = x.reshape(batch, NUM_STANDARD_CARDS)
            return torch.cat([x, x.new_zeros(batch, pad)], dim=1) if pad else x

        return flat(above), flat(below), flat(total.expand(batch, 4, 13))

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.by_feature(obs).transpose(1, 2)

    def at(self, obs: torch.Tensor, cards: torch.Tensor) -> torch.Tensor:
        """The features of the given cards only: ``cards`` (batch, K) -> (batch, K, num_features).

        The same values as ``self(obs)`` gathered at ``cards``, in one small gather.
        """
        features = self.by_feature(obs)
        return features.gather(2, cards[:, None, :].expand(-1, features.shape[1], -1)).transpose(1, 2)

    def by_feature(self, obs: torch.Tensor) -> torch.Tensor:
        """The features laid out feature-major: (batch, num_features, num_cards), contiguous."""
        n, c = self.num_players, self.num_cards
        batch = obs.shape[0]
        hand = self.block(obs, "hand", c)
        played = self.block(obs, "played", n, c).sum(dim=1)
        turned = self.block(obs, "turned_card", c)
        in_trick = self.block(obs, "current_trick", n, c).sum(dim=1)
        exists = self.exists
        if self.universal:  # jokers one-hot (0, 1, 2): joker 52 exists with 1 or 2, joker 53 with 2
            jokers = self.block(obs, "jokers", 3)
            exists = torch.cat([exists[:NUM_STANDARD_CARDS].expand(batch, -1),
                                1.0 - jokers[:, :1], jokers[:, 2:]], dim=1)
        unseen = (exists - hand - played - turned).clamp(0.0, 1.0)

        trump_block = self.block(obs, "trump", 5)
        led_block = self.block(obs, "led_suit", 5)
        # one row per suit column (4 suits and the jokers' column) of: is trump, is led, a void of each other seat
        voids = self.block(obs, "voids", n, 4)[:, 1:]  # the other seats, clockwise
        per_suit = torch.cat([
            trump_block[:, None, :4], led_block[:, None, :4], voids,
        ], dim=1)  # (batch, n + 1, 4)
        joker_column = torch.zeros_like(per_suit[:, :, :1])
        joker_column[:, 0] = 1.0  # jokers: trump-like, never of the led suit, no void
        by_suit = torch.cat([per_suit, joker_column], dim=2).index_select(2, self.suit)  # (batch, n + 1, C)

        unseen_above, _, unseen_suit = self._per_suit(unseen)
        hand_above, hand_below, hand_suit = self._per_suit(hand)

        power = self.power.flatten(0, 1).index_select(0, trump_block.argmax(dim=1) * 5 + led_block.argmax(dim=1))
        best = torch.where(in_trick > 0, power, -torch.inf).amax(dim=1, keepdim=True)  # -inf: an empty trick
        beats = (power > best).float()

        features = torch.empty(batch, self.num_features, c, dtype=obs.dtype, device=obs.device)
        for column, value in enumerate((
            hand, unseen, in_trick, by_suit[:, 0], by_suit[:, 1], self.rank_feature,
            unseen_above / 12.0, hand_above / 12.0, hand_below / 12.0, hand_suit / 13.0, unseen_suit / 13.0, beats,
        )):
            features[:, column] = value
        features[:, 12:] = by_suit[:, 2:]
        return features
