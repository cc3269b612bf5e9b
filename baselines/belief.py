"""Inferred hidden cards: a bid model learned from self-play, and determinizations weighted by what the seats did.

A seat's bid says how strong its hand was when it bid. :class:`BidModel` is the
chance of each bid given the hand size and the hand's *likely winners* (the greedy
playout's count: aces and kings of side suits, trumps from the ten up, jokers),
counted from the bids of a policy in self-play (``blackout belief fit``; the fitted
table of the shipped ``ppo`` lies beside this module). :class:`Belief` turns a view,
that model and the play model (:mod:`~blackout_baselines.play_model`: the chance of
the cards each seat played this hand) into determinizations: deals are drawn as
:class:`~blackout_baselines.deals.DealSampler` draws them (every one consistent
with the view: the voids, the cards shown, the counts), each weighted by the chance
of the bids the other seats made and of the cards they played with the hands it
gives them (their cards now plus those they have played), and redrawn in proportion
to the weights (sampling importance resampling). Both models are smoothed and keep
every choice above a floor, so no consistent deal has weight zero and the search
still reaches every deal the view allows when a model is wrong (the resampled deals
approach the posterior under the models as the candidates grow).
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from blackout_env import BlackoutGame, PlayerView, Rules
from blackout_env.game.cards import NUM_STANDARD_CARDS

from ._ismcts_kernels import SIDE_TRICKS, TRUMP_TRICKS
from ._model_file import load_counts, save_counts
from .play_model import PlayModel, play_events, play_likelihood

__all__ = ["DEFAULT_BID_MODEL", "Belief", "BidModel", "bid_records", "likely_winners"]

DEFAULT_BID_MODEL = Path(__file__).with_name("bid_model.json")
"""The bid model fitted to the shipped ``ppo``'s bids (``blackout belief fit``)."""

MAX_TRICKS = 20
"""Hand sizes and likely winners above this are counted as this (no valid table deals more than 18 cards)."""

FORMAT = "blackout-bid-model"

_POPCOUNT_2 = np.array([0, 1, 1, 2])


def likely_winners(hands: np.ndarray | Iterable[int], trump: int | None) -> np.ndarray:
    """Per hand (a card bitmask), its likely winners, rounded: the greedy playout's bid
    (``_ismcts_kernels.greedy_bid``) before the hook and the hand size bound it."""
    hands = np.asarray(hands, dtype=np.uint64)
    tricks = _POPCOUNT_2[(hands >> np.uint64(NUM_STANDARD_CARDS)) & np.uint64(3)].astype(float)
    for suit in range(4):
        cards = ((hands >> np.uint64(13 * suit)) & np.uint64(8191)).astype(np.int64)
        tricks = tricks + (TRUMP_TRICKS[cards] if suit == trump else SIDE_TRICKS[cards])
    return np.floor(tricks + 0.5).astype(np.int64)


class BidModel:
    """The chance of a bid given the hand size and the hand's likely winners, from counted bids.

    ``counts[size, winners, bid]`` are the bids seen; :meth:`probabilities` smooths each
    row toward the pooled distribution of ``bid - winners`` (all sizes) with weight
    ``smoothing``, and gives every bid of the hand at least ``floor`` before normalising.
    """

    def __init__(self, counts: np.ndarray, smoothing: float = 5.0, floor: float = 1e-3, source: str = "") -> None:
        counts = np.asarray(counts, dtype=float)
        with np.errstate(over="ignore"):  # counts near 1e308 sum to inf: refused, not warned about
            total = counts.sum()
        if counts.shape != (MAX_TRICKS + 1,) * 3 or not np.isfinite(counts).all() or (counts < 0).any() or not np.isfinite(total):
            raise ValueError(f"BidModel: counts must be finite, >= 0, of a finite sum and of shape {(MAX_TRICKS + 1,) * 3}")
        if not (0 <= smoothing < math.inf and 0 < floor < 1):
            raise ValueError("BidModel: smoothing must be a finite number >= 0 and floor in (0, 1)")
        self.counts, self.smoothing, self.floor, self.source = counts, float(smoothing), float(floor), source
        span = np.arange(-MAX_TRICKS, MAX_TRICKS + 1)
        sizes, winners, bids = np.meshgrid(*(np.arange(MAX_TRICKS + 1),) * 3, indexing="ij")
        pooled = np.bincount((bids - winners + MAX_TRICKS).ravel(), weights=counts.ravel(), minlength=span.size)
        pooled = (pooled + 1.0) / (pooled + 1.0).sum()
        prior = pooled[bids - winners + MAX_TRICKS] * (bids <= sizes)
        prior /= prior.sum(axis=2, keepdims=True)
        rows = counts.sum(axis=2, keepdims=True)
        table = (counts + self.smoothing * prior) / (rows + self.smoothing + (rows + self.smoothing == 0))
        table = np.maximum(table, self.floor) * (bids <= sizes)
        self.table = table / table.sum(axis=2, keepdims=True)
        """``table[size, winners, bid]``: the smoothed chance of the bid (0 for a bid above the size)."""

    @classmethod
    def fit(cls, records: Iterable[tuple[int, int, int]], source: str = "", **options: float) -> BidModel:
        """Count ``(hand size, likely winners, bid)`` records (``bid_records``) into a model."""
        counts = np.zeros((MAX_TRICKS + 1,) * 3)
        for size, winners, bid in records:
            if not 0 <= bid <= size:
                raise ValueError(f"BidModel.fit: bid {bid} outside 0..{size}")
            counts[min(size, MAX_TRICKS), min(winners, size, MAX_TRICKS), min(bid, MAX_TRICKS)] += 1
        return cls(counts, source=source, **options)

    def probabilities(self, size: int, winners: np.ndarray, bid: int) -> np.ndarray:
        """The chance of ``bid`` in a hand of ``size`` cards, for each count of likely winners."""
        size = min(size, MAX_TRICKS)
        return self.table[size, np.minimum(winners, size), min(bid, MAX_TRICKS)]

    def save(self, path: str | Path) -> None:
        save_counts(path, FORMAT, self)

    @classmethod
    def load(cls, path: str | Path = DEFAULT_BID_MODEL) -> BidModel:
        """A saved model; a clear error for a missing, foreign or corrupt file."""
        return load_counts(cls, path, FORMAT, "bid model")


_DEFAULT: BidModel | None = None


def default_model() -> BidModel:
    """The shipped model (``DEFAULT_BID_MODEL``), loaded once."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = BidModel.load(DEFAULT_BID_MODEL)
    return _DEFAULT


class Belief:
    """Determinizations of ``view`` weighted by what the other seats did: the chance of their bids under
    ``bids`` (a :class:`BidModel`) times the chance of the cards they played under ``play`` (a
    :class:`~blackout_baselines.play_model.PlayModel`); either may be None (not weighted by it).

    ``candidates`` deals are drawn per deal wanted; :meth:`weights` gives a deal's weight, and
    :meth:`draw` redraws the wanted number in proportion.
    """

    def __init__(self, view: PlayerView, bids: BidModel | None = None, play: PlayModel | None = None,
                 candidates: int = 4) -> None:
        if candidates < 1:
            raise ValueError(f"Belief: candidates must be at least 1, got {candidates}")
        self.view, self.model, self.play, self.candidates = view, bids, play, int(candidates)
        self.size = view.hand_size
        self.trump = view.trump
        bid = bids is not None
        self.seats = [s for s in range(view.num_players) if bid and s != view.player and view.bids[s] is not None]
        self.played = {s: sum(1 << c for c in view.played[s]) for s in self.seats}
        events = play_events(view) if play is not None else []
        self.events = events if any(event.seat != view.player for event in events) else []

    def weights(self, deals: list[list[int]]) -> np.ndarray:
        """Per deal (hands as bitmasks by seat), the chance of the other seats' bids and plays."""
        weights = np.ones(len(deals))
        if not deals:
            return weights
        hands = np.array(deals, dtype=np.uint64)
        for seat in self.seats:
            held = hands[:, seat] | np.uint64(self.played[seat])
            weights *= self.model.probabilities(self.size, likely_winners(held, self.trump), self.view.bids[seat])
        if self.events:
            weights *= play_likelihood(self.view, self.play, hands, self.events)
        return weights

    def draw(self, sampler, count: int, np_rng: np.random.Generator, rng: random.Random) -> list[list[int]]:
        """``count`` deals: ``candidates * count`` drawn by ``sampler`` (a ``DealSampler`` of the view),
        redrawn with replacement in proportion to :meth:`weights` (all of them when nothing weighs them)."""
        if not (self.seats or self.events) or self.candidates == 1:
            return sampler.draw(count, np_rng, rng)
        pool = sampler.draw(self.candidates * count, np_rng, rng)
        weights = self.weights(pool)
        picks = np_rng.choice(len(pool), size=count, p=weights / weights.sum())
        return [pool[i] for i in picks]


def bid_records(bot, rules: Rules, hands: int, seed: int = 0) -> list[tuple[int, int, int]]:
    """``(hand size, likely winners, bid)`` of every bid of ``hands`` fresh hands in which ``bot`` (any
    object with ``act(view)``) makes every bid; each hand is a random round of the rules."""
    rng = random.Random(seed)
    records = []
    for index in range(hands):
        game = BlackoutGame(rules, seed=seed * 1_000_003 + index, start_round=rng.randrange(rules.num_rounds))
        while game.phase == "bid":
            view = game.view(game.current_player)
            action = bot.act(view)
            hand = sum(1 << c for c in view.hand)
            winners = int(likely_winners([hand], view.trump)[0])
            records.append((view.hand_size, winners, action - rules.num_cards))
            game.step(action)
    return records
