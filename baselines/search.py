"""SearchBot: determinized (perfect-information Monte Carlo) search with heuristic playouts.

For each decision the bot

1. **samples the unseen cards** into the other hands consistently with its view
   (:func:`~blackout_baselines.deals.sample_hands`): each seat gets exactly the number of cards it still
   holds, never a card of a suit it has shown void in, the dealer keeps a card
   shown to everyone, and the cards out of play take the rest;
2. **rebuilds the hand** as an engine game from those cards and the cards
   already played (:func:`determinize`), dealt by the dealing protocol and
   replayed action by action from the start of the hand;
3. **plays each legal action out** to the end of the hand in every sample
   (the same samples for every action, so their comparison is not blurred by
   card luck), with :class:`~blackout_baselines.heuristic.HeuristicBot` bidding for the
   seats still to bid and a fast play policy (:func:`playout_card`) that
   follows the heuristic's rules (win as cheaply as possible while tricks are
   needed, otherwise duck with the highest card that loses) with the sampled
   hands in full view;
4. chooses the action with the highest mean hand score for itself.

The budget is ``samples`` determinizations per decision, or a time limit in
milliseconds (then the number of samples depends on the machine, so results
are no longer reproducible from the seed alone).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from blackout_env.agents.policies import Explanation, action_reasons
from blackout_env.game.engine import BlackoutGame
from blackout_env.game.rules_logic import CANNOT_WIN, card_powers, dealer_of_round, playable_cards, suit_led_after
from blackout_env.game.view import PlayerView

from .base import Bot
from .deals import deal_deck, initial_hands, sample_hands
from .heuristic import HeuristicBot, _beats, _strength, _winning_card

__all__ = ["SearchBot", "determinize", "playout_card"]

def determinize(view: PlayerView, hands: Sequence[Sequence[int]]) -> BlackoutGame:
    """An engine game at the view's moment in which the seats hold ``hands`` (from :func:`~blackout_baselines.deals.sample_hands`).

    The deck of the current hand is dealt by :func:`~blackout_baselines.deals.deal_deck` from each seat's
    current cards plus the cards it has played; then the hand's actions are
    replayed.
    """
    rules = view.rules
    deck = deal_deck(rules, view.dealer, initial_hands(view, hands), view.turned_card, view.turned_card_held_by_dealer)
    r = view.round_index
    dealer = view.dealer
    game = BlackoutGame(rules, seed=0, decks={r: deck}, first_dealer=dealer_of_round(dealer, -r, view.num_players), start_round=r)
    for action in view.round_actions:
        game.step(action)
    return game


def _strongest_later(game: BlackoutGame, seats: Sequence[int], led: int | None) -> int:
    """The highest :func:`~blackout_env.game.rules_logic.card_power` any of ``seats`` (to play later in this trick) may play.

    A card is beaten by a later seat exactly when this is above its own power (the
    rule of ``_heuristic_core._beats``); ``CANNOT_WIN - 1`` when no seat is left to play.
    """
    trump = game.trump
    powers = card_powers(led, trump)
    strongest = CANNOT_WIN - 1
    for seat in seats:
        # A later seat follows: trump_broken and must_break only matter to the leader.
        for card in playable_cards(game.hands[seat], led, trump, leads=False, trump_broken=True, must_break=False):
            if powers[card] > strongest:
                strongest = powers[card]
    return strongest


def playout_card(game: BlackoutGame) -> int:
    """The fast playout policy: the heuristic's play rules for the current player, all hands in view.

    While the player wants tricks it plays the cheapest card sure to win the
    trick (no later seat can beat it), else its strongest card that beats the
    trick so far, else its weakest card; when it wants no more tricks it plays
    its highest card that cannot win, else one that a later seat can beat,
    else (forced to win) its highest card. Leading without a sure winner, it
    leads its weakest card.
    """
    legal = game.legal_actions()
    if len(legal) == 1:
        return legal[0]
    seat = game.current_player
    rules = game.rules
    trump = game.trump
    bid, won = game.bids[seat], game.tricks_won[seat]
    need = bid - won
    left = game.tricks_left
    if 0 < need <= left:
        want = True
    else:  # the bid cannot be made, or is made (need 0) or over: a trick more helps only if it scores more
        want = need != 0 and rules.hand_score(bid, won + 1) > rules.hand_score(bid, won)
    trick = game.current_trick
    n = game.num_players
    later = [(seat + i) % n for i in range(1, n - len(trick))]
    if trick:
        best, led = _winning_card(trick, trump)
    else:
        best, led = None, None

    def strength(c: int) -> int:
        return _strength(c, trump)

    wins_now = []
    sure = []
    strongest_later: dict[int | None, int] = {}  # by the led suit once the card is played (it varies only when leading)
    for c in legal:
        if best is not None and not _beats(c, best, led, trump):
            continue
        wins_now.append(c)
        this_led = suit_led_after(led, c)
        if this_led not in strongest_later:
            strongest_later[this_led] = _strongest_later(game, later, this_led)
        if strongest_later[this_led] <= card_powers(this_led, trump)[c]:  # no later seat can beat it
            sure.append(c)
    if want:
        if sure:
            return min(sure, key=strength)
        if wins_now and trick:
            return max(wins_now, key=strength)
        return min(legal, key=strength)
    losing = [c for c in legal if c not in wins_now]
    if losing:
        return max(losing, key=strength)
    if not trick:
        return min(legal, key=strength)
    beatable = [c for c in legal if c not in sure]
    if beatable:
        return max(beatable, key=strength)
    return max(legal, key=strength)


class SearchBot(Bot):
    """Determinized search: sample the unseen cards, play every action out, keep the best mean score.

    Bidding, the decision with the most at stake, gets ``bid_samples``
    determinizations; a one-card hand's bid is left to the heuristic, which
    computes it exactly.

    Args:
        seed: seeds the sampling of unseen cards.
        samples: determinizations per card to play (default 16).
        bid_samples: determinizations per bid (default 4 x ``samples``).
        time_limit_ms: when given, sample until this many milliseconds have
            passed (at least one sample) for every decision, instead of a
            fixed number of samples.
    """

    name = "search"

    def __init__(
        self,
        seed: int | None = None,
        samples: int = 16,
        bid_samples: int | None = None,
        time_limit_ms: float | None = None,
    ) -> None:
        super().__init__(seed)
        if bid_samples is None and isinstance(samples, (int, np.integer)) and not isinstance(samples, bool):
            bid_samples = 4 * samples
        for name, value in (("samples", samples), ("bid_samples", bid_samples)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{name}: must be a positive integer, got {value!r}")
        if time_limit_ms is not None and (
            isinstance(time_limit_ms, bool) or not isinstance(time_limit_ms, (int, float, np.integer, np.floating))
            or not 0 < time_limit_ms < math.inf
        ):
            raise ValueError(f"time_limit_ms: must be a positive finite number of milliseconds, got {time_limit_ms!r}")
        self.samples = int(samples)
        self.bid_samples = int(bid_samples)
        self.time_limit_ms = time_limit_ms
        self.heuristic = HeuristicBot()

    def act(self, view: PlayerView) -> int:
        return self.explain(view).action

    def explain(self, view: PlayerView) -> Explanation:
        """The action :meth:`act` chooses (it is this one's) and the mean sampled hand score of every legal action.

        A single legal action is played without sampling, and a one-card hand's bid is the heuristic's
        (its explanation then). The explanation's value is the chosen action's mean.
        """
        legal = self._check_turn(view)
        if len(legal) == 1:
            return Explanation(int(legal[0]), "search", action_reasons(legal), None,
                               "the only legal action: nothing to search")
        if view.phase == "bid" and view.hand_size == 1:
            why = self.heuristic.explain(view)
            return replace(why, note=f"a one-card bid is the heuristic's, which it computes exactly: {why.note}")
        values, deals = self._sampled_values(view)
        # Ties (e.g. equivalent cards) go to the heuristic's choice, so search only overrides it on evidence.
        preferred = self.heuristic.act(view)
        best = max(values.values())
        if values[preferred] >= best - 1e-9:
            action = int(preferred)
        else:
            action = int(max(legal, key=lambda a: values[a]))
        note = (f"mean score of the hand (points) after each action over {deals} sampled deals of the unseen cards, "
                "played out by the heuristic's rules; ties go to the heuristic's choice")
        return Explanation(action, "search", action_reasons(legal, values=values), values[action], note)

    def action_values(self, view: PlayerView) -> dict[int, float]:
        """Mean hand score of each legal action over the sampled deals."""
        return self._sampled_values(view)[0]

    def _sampled_values(self, view: PlayerView) -> tuple[dict[int, float], int]:
        """:meth:`action_values` and the number of deals sampled."""
        legal = view.legal_actions
        totals = dict.fromkeys(legal, 0.0)
        deadline = None if self.time_limit_ms is None else time.perf_counter() + self.time_limit_ms / 1000.0
        budget = self.bid_samples if view.phase == "bid" else self.samples
        done = 0
        while True:
            game = determinize(view, sample_hands(view, self.rng))
            for action in legal:
                totals[action] += self._playout(game, action, view.player)
            done += 1
            if deadline is None:
                if done >= budget:
                    break
            elif time.perf_counter() >= deadline:
                break
        return {a: total / done for a, total in totals.items()}, done

    def _playout(self, game: BlackoutGame, action: int, player: int) -> float:
        game = game.clone()
        game.step(action)
        round_index = game.round_index
        heuristic = self.heuristic
        while game.round_index == round_index and not game.is_over:
            if game.phase == "bid":
                seat = game.current_player
                game.step(heuristic.act(game.view(seat)))
            else:
                game.step(playout_card(game))
        return float(game.round_scores[-1][player])
