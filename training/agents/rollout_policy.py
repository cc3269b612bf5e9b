"""``ppo+rollout``: the network improved by one step of search, with the network's own playouts.

At a decision, :class:`RolloutPolicy`

1. **samples the unseen cards** consistently with the player's view
   (:func:`blackout_baselines.deals.sample_hands`: the card counts, the voids
   shown, a card shown to all), ``samples`` times;
2. **deals each sample into the batched engine** (:class:`~blackout_env.batched.BatchedBlackout`,
   one game per (sample, legal action)), at the view's hand, with the view's
   dealer and scores, and replays the hand's actions so far;
3. **weights each sample by how likely the network finds the bids made so
   far** with those cards (``belief``: the weight is the product of the
   network's probabilities of the earlier bids of the hand, to that power; 0
   samples uniformly). Card plays are not weighted: the network plays
   them almost deterministically, so their likelihood leaves one sample in
   a few carrying all the weight;
4. **plays every legal action out to the end of the hand with the network in
   every seat** (the same samples for every action, so their comparison is
   not blurred by card luck), each seat acting on its own observation as in
   a real game, all games stepped together;
5. takes the action with the highest weighted mean hand score, unless the
   network's own choice is within ``margin`` points of it.

It is the step that distilling needs, one policy-improvement step over the
network (a single-agent version of SPARTA, Lerer et al. 2020, for Hanabi),
measured at the standard 4-player table in docs/generalist.md. ``phases``
says which decisions are searched: ``bids`` (the default), ``cards`` or
``all``; the network makes the others.

Spec: ``ppo+rollout`` or ``ppo+rollout:samples=32,phases=bids,card_samples=16,margin=0,belief=1,checkpoint=PATH``
(``checkpoint`` defaults to the shipped generalist, so it plays every table ``ppo`` plays).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from blackout_baselines.deals import deal_deck, initial_hands, sample_hands

from blackout_env import PlayerView, Rules
from blackout_env.agents.policies import Explanation, SeededPolicy, action_reasons, parse_options, pop_file, pop_seed
from blackout_env.batched import BatchedBlackout
from blackout_env.game.rules_logic import dealer_of_round
from blackout_env.game.universal import rules_actions, universal_action_mask, universal_actions

from .policy_net import PolicyBot, load_policy_bot

__all__ = ["PHASES", "RolloutPolicy", "load_ppo_rollout"]

PHASES = ("bids", "cards", "all")
"""Which decisions ``ppo+rollout`` searches: the bids, the card plays, or every decision with a choice."""


def positive_int(name: str, value: Any) -> int:
    """``value`` as an int, or a ValueError naming ``name`` unless it is a whole number >= 1."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name}: must be a positive whole number, got {value!r}")
    return int(value)


def _non_negative(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) or not (
        np.isfinite(value) and value >= 0
    ):
        raise ValueError(f"{name}: must be a finite number >= 0, got {value!r}")
    return float(value)


def _normalized_weights(log_likelihood: np.ndarray, belief: float) -> np.ndarray:
    """Weights proportional to ``likelihood ** belief``, summing to 1: ``exp(belief * (ll - max ll))``, so
    that a huge ``belief`` gives the likeliest deals all the weight (its limit) rather than overflowing. A
    deal of likelihood 0 (-inf) weighs nothing; when every one is, the deals weigh the same."""
    finite = np.isfinite(log_likelihood)
    if not finite.any():
        return np.full(len(log_likelihood), 1.0 / len(log_likelihood))
    relative = np.where(finite, log_likelihood - log_likelihood[finite].max(), -np.inf)  # <= 0
    with np.errstate(over="ignore", invalid="ignore"):
        scaled = np.where(np.isneginf(relative), -np.inf, np.where(relative == 0.0, 0.0, belief * relative))
    weights = np.exp(scaled)
    return weights / weights.sum()


class RolloutPolicy:
    """A network (a :class:`PolicyBot`) whose decisions are improved by playouts of the network itself.

    Args:
        bot: the network, greedy; it plays every seat of every playout and the decisions not searched.
        samples: deals of the unseen cards per bid.
        phases: ``"bids"``, ``"cards"`` or ``"all"`` (bids and card plays).
        card_samples: deals per card play.
        margin: keep the network's own choice unless another action's mean is more than this many
            points above it (0: the best mean wins; ties go to the network).
        belief: the power of the likelihood of the hand's earlier bids in a sample's weight (0: uniform).
        seed: seeds the sampling of the unseen cards.
    """

    name = "ppo+rollout"

    def __init__(
        self,
        bot: PolicyBot,
        samples: int = 32,
        phases: str = "bids",
        card_samples: int = 16,
        margin: float = 0.0,
        belief: float = 1.0,
        seed: int | None = None,
    ) -> None:
        if phases not in PHASES:
            raise ValueError(f"phases: must be one of {', '.join(PHASES)}; got {phases!r}")
        if not bot.greedy:
            raise ValueError("ppo+rollout: the network must be greedy (its playouts model its own play)")
        self.bot = bot
        self.samples = positive_int("samples", samples)
        self.card_samples = positive_int("card_samples", card_samples)
        self.phases = phases
        self.margin = _non_negative("margin", margin)
        self.belief = _non_negative("belief", belief)
        self.universal = bot.observation == "universal"
        self.rng = np.random.default_rng(seed)

    def seed(self, seed: int | None) -> None:
        """Reseed the sampling of unseen cards."""
        self.rng = np.random.default_rng(seed)

    def searches(self, view: PlayerView) -> bool:
        """Whether the decision of ``view`` is searched (else the network makes it)."""
        wanted = ("bids", "all") if view.phase == "bid" else ("cards", "all")
        return len(view.legal_actions) > 1 and self.phases in wanted

    def act(self, view: PlayerView) -> int:
        """The action for ``view``: the best mean of the playouts, or the network's own choice."""
        own = self.bot.act(view)
        if not self.searches(view):
            return own
        return self._choose(own, self.action_values(view))

    def explain(self, view: PlayerView) -> Explanation:
        """The action :meth:`act` chooses and why: the network's explanation where it decides alone; for a
        searched decision, each action's weighted mean playout score (points) and the network's probability."""
        network = self.bot.explain(view)  # greedy: its action is bot.act's, and no generator is drawn from
        if not self.searches(view):
            return network
        values = self.action_values(view)
        action = self._choose(network.action, values)
        probabilities = {reason.action: reason.probability for reason in network.actions}
        samples = self.samples if view.phase == "bid" else self.card_samples
        weighted = ", weighted by how well they fit the bids made," if self.belief > 0 else ""
        note = (f"mean score of the hand (points) after each action over {samples} sampled deals of the unseen "
                f"cards{weighted} played out by the network in every seat, and the network's probabilities; "
                f"the network's choice stands unless an action is more than {self.margin:g} points better")
        return Explanation(action, "search", action_reasons(view.legal_actions, probabilities, values),
                           values[action], note)

    def _choose(self, own: int, values: dict[int, float]) -> int:
        """The action with the best mean, unless the network's own choice ``own`` is within the margin of it."""
        best = max(values, key=lambda a: values[a])
        return own if values[own] >= values[best] - self.margin - 1e-9 else best

    # ------------------------------------------------------------ the search
    def _log_policy(self, obs: np.ndarray, mask: np.ndarray, rules: Rules) -> torch.Tensor:
        """Log-probabilities of the network over its own action space (universal or the rules')."""
        if self.universal:
            mask = universal_action_mask(mask, rules)
        with torch.inference_mode():
            logits = self.bot.model.logits(torch.from_numpy(np.array(obs, dtype=np.float32)), torch.as_tensor(mask != 0))
            return torch.log_softmax(logits, dim=-1)

    def _network_action(self, actions: np.ndarray, rules: Rules) -> np.ndarray:
        return rules_actions(actions, rules) if self.universal else actions

    def _own_action(self, actions: np.ndarray, rules: Rules) -> np.ndarray:
        return universal_actions(actions, rules) if self.universal else actions

    def sampled_games(self, view: PlayerView, games: int, samples: int) -> tuple[BatchedBlackout, int, np.ndarray]:
        """``games`` batched games at the view's moment, ``games / samples`` in a row on each sampled deal.

        Returns the games, the view's player (the games' seats are the view's) and each game's
        log-likelihood of the hand's earlier bids under the network (0 with ``belief`` 0; a deal's
        weight is its likelihood to the power ``belief``).
        """
        rules = view.rules
        n, round_index = rules.num_players, view.round_index
        per_sample = games // samples
        decks = np.tile(np.arange(rules.deck_size, dtype=np.int8), (games, rules.num_rounds, 1))
        for s in range(samples):
            hands = sample_hands(view, self.rng)
            deck = deal_deck(rules, view.dealer, initial_hands(view, hands), view.turned_card, view.turned_card_held_by_dealer)
            decks[s * per_sample : (s + 1) * per_sample, round_index] = deck
        # The match's first dealer, so that the games' dealer of this hand is the view's.
        table = rules.replace(first_dealer=dealer_of_round(view.dealer, -round_index, n))
        env = BatchedBlackout(
            table, games, episode="hand", observation="universal" if self.universal else "rules", copy=False, seed=0
        )
        env.reset(decks=decks, rounds=np.full(games, round_index))
        env.scores[:] = view.scores  # the network reads the match's scores, not the zeros of a fresh hand
        log_likelihood = np.zeros(games)
        for action in view.round_actions:
            if action >= rules.num_cards and self.belief > 0:
                log_policy = self._log_policy(env.observe(), env.action_mask(), rules)
                column = int(self._own_action(np.array([action]), rules)[0])
                log_likelihood += log_policy[:, column].numpy().astype(np.float64)
            env.step(np.full(games, action), observe=False)
        me = view.player
        if (env.current_player != me).any():  # pragma: no cover - the deals reproduce the view's moment
            raise RuntimeError(f"{self.name}: the sampled deals do not reproduce the view's turn")
        return env, me, log_likelihood

    def action_values(self, view: PlayerView) -> dict[int, float]:
        """The weighted mean hand score of each legal action of ``view`` over the sampled deals."""
        if not view.legal_actions:
            raise ValueError(f"{self.name}: player {view.player} has no legal action now (phase {view.phase})")
        rules = view.rules
        legal = np.array(view.legal_actions, dtype=np.int64)
        samples = self.samples if view.phase == "bid" else self.card_samples
        games = samples * len(legal)
        env, me, log_likelihood = self.sampled_games(view, games, samples)
        env.step(np.tile(legal, samples), observe=False)
        hand_scores = np.zeros(games)
        playing = np.ones(games, dtype=bool)
        while playing.any():
            rows = np.flatnonzero(playing)
            log_policy = self._log_policy(env.observe()[rows], env.action_mask()[rows], rules)
            actions = np.zeros(games, dtype=np.int64)
            actions[rows] = self._network_action(log_policy.argmax(dim=-1).numpy(), rules)
            step = env.step(actions, active=playing, observe=False)
            finished = step.done & playing
            hand_scores[finished] = step.rewards[finished, me]
            playing &= ~finished

        per_sample = log_likelihood.reshape(samples, len(legal))[:, 0]  # the same deal for every action
        weights = _normalized_weights(per_sample, self.belief)
        means = weights @ hand_scores.reshape(samples, len(legal))
        return {int(a): float(v) for a, v in zip(legal, means)}


def load_ppo_rollout(argument: str | None, rules: Rules | None, seed: int | None) -> RolloutPolicy | SeededPolicy:
    """The loader behind the policy spec ``ppo+rollout`` (``blackout_env.agents.policies``)."""
    spec = "ppo+rollout" if argument is None else f"ppo+rollout:{argument}"
    options = parse_options(argument, spec)
    checkpoint = pop_file(options, "checkpoint", spec)
    fixed = pop_seed(options, spec)
    seed = seed if fixed is None else fixed
    bot = load_policy_bot(checkpoint, rules, seed=seed)
    try:
        policy = RolloutPolicy(bot, seed=seed, **options)
    except (TypeError, ValueError) as error:  # an option it does not take, or a bad value
        raise ValueError(f"policy {spec!r}: {error}") from None
    policy.checkpoint = bot.checkpoint
    return policy if fixed is None else SeededPolicy(policy, fixed)
