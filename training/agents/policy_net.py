"""The actor-critic network, its checkpoints, and :class:`PolicyBot`, a trained policy as a bot.

The network reads the documented observation of :mod:`blackout_env.game.encoding`
and outputs one logit per action of the rules' action space (cards, then
bids) plus a state value. Its policy is **one masked categorical** over bids
and plays: the two kinds of action are disjoint ranges of one ``Discrete``
space and the legal-action mask already selects the phase's range, so one
distribution keeps PPO's log-probabilities and entropy simple; the phase is in
the observation, so the trunk can specialise. The card logits come either from
a linear layer (``arch="mlp"``) or, by default, from a pointer head over the
held cards' own features (``arch="cards"``, see :class:`ActorCritic`), which
learns card play from far fewer games.
Illegal actions get a logit of ``-1e9`` (finite, so entropy and gradients stay
finite), which makes their probability exactly zero in float32.

A checkpoint is one ``torch.save`` file holding the weights, the network's
shape, the rules it was trained for and the observation layout it reads;
:func:`load_checkpoint` refuses a file whose layout or rules differ from the
ones asked for, rather than letting a network read a vector it does not know.

A network built with ``observation="universal"`` reads the universal
observation (:mod:`blackout_env.game.universal`) and acts in the universal action
space (card ``c`` is ``c``, bid ``k`` is ``54 + k``): one network for every
table. Its checkpoint plays any rules; :class:`PolicyBot` translates each
view's observation, mask and action.

Two checkpoints ship in ``checkpoints/``: :data:`SHIPPED_CHECKPOINT`, the
universal generalist (policy spec ``ppo``), and :data:`SPECIALIST_CHECKPOINT`,
the rules-sized standard 4-player specialist (``ppo-standard``).
"""

from __future__ import annotations

import math
import os
import zipfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import torch
from torch import nn

from blackout_env import PlayerView, Rules
from blackout_env.agents.policies import Explanation, action_reasons
from blackout_env.game import encoding
from blackout_env.game.universal import (
    MAX_HAND,
    MAX_PLAYERS,
    UNIVERSAL_CARDS,
    UNIVERSAL_NUM_ACTIONS,
    observation_kind,
    rules_actions,
    universal_action_mask,
    universal_layout,
    universal_observation,
    universal_size,
)

from ..files import replaced_atomically

__all__ = [
    "ActorCritic",
    "CheckpointError",
    "PolicyBot",
    "SHIPPED_CHECKPOINT",
    "SHIPPED_NAMES",
    "SPECIALIST_CHECKPOINT",
    "SparseRows",
    "load_checkpoint",
    "load_policy_bot",
    "load_ppo_policy",
    "load_ppo_standard_policy",
    "export_policy",
    "make_model",
    "masked_logits",
    "masked_policy",
    "oracle_inputs",
    "oracle_size",
    "save_checkpoint",
    "sparse_linear",
    "sparse_rows",
    "table_oracle_inputs",
    "universal_oracle_inputs",
]

CHECKPOINT_FORMAT = "blackout-ppo-checkpoint"
CHECKPOINT_VERSION = 1
SHIPPED_CHECKPOINT = Path(__file__).resolve().parent / "checkpoints" / "ppo_generalist.pt"
"""The policy named ``ppo``: the generalist shipped with the package, a universal network (every rules set, 3-7 players)."""
SPECIALIST_CHECKPOINT = Path(__file__).resolve().parent / "checkpoints" / "ppo_standard_4p.pt"
"""The policy named ``ppo-standard``: the standard 4-player specialist (rules-sized; refuses other rules)."""
SHIPPED_NAMES = {SHIPPED_CHECKPOINT: "ppo", SPECIALIST_CHECKPOINT: "ppo-standard"}
"""The policy spec of each shipped checkpoint (a bot loaded from it carries that name)."""

MASKED_LOGIT = -1e9
ORACLE_WIDTH = 64
"""Hidden width of the oracle critic (``model.critic: oracle``): small, so that it adds little to each update."""

# A forked worker (``blackout eval --workers N`` forks after loading the policies) inherits torch's
# OpenMP thread pool without its threads, and waits forever in its first parallel region; running
# torch single-threaded in the child avoids the pool (one-row inference gains nothing from threads).
os.register_at_fork(after_in_child=lambda: torch.set_num_threads(1))


@contextmanager
def one_thread() -> Iterator[None]:
    """Torch on one thread inside the block, its setting restored after (a switch and back: 0.16 us measured).

    One view's forward pass gains nothing from threads, and beside busy processes on a 2-core machine
    torch's pool waits at every layer for its descheduled thread (a standard match of ``ppo``: 44x the wall
    time, docs/evaluation.md).
    """
    threads = torch.get_num_threads()
    if threads == 1:
        yield
        return
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


class CheckpointError(ValueError):
    """A checkpoint that is missing, unreadable, not a policy, or made for other rules or observations."""


def layer_init(layer: nn.Linear, std: float = float(np.sqrt(2)), bias_const: float = 0.0) -> nn.Linear:
    """Orthogonal weights and constant biases, as in CleanRL's PPO."""
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias_const)
    return layer


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Logits with illegal actions (``mask`` false or 0) pushed to ``-1e9``."""
    return logits.masked_fill(~mask.bool(), MASKED_LOGIT)


def masked_policy(logits: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The masked categorical policy of rows of logits: ``(log-probabilities, probabilities)``.

    The values of ``torch.distributions.Categorical(logits=masked_logits(logits, mask))``'s
    ``logits`` and ``probs`` (up to float rounding), computed by ``log_softmax`` and
    ``softmax``: ``Categorical`` normalises with ``logsumexp``, whose ``exp`` of the
    ``-1e9`` of the illegal actions takes a slow path on the CPU (several times the
    time of the whole softmax).
    """
    log_policy = torch.log_softmax(masked_logits(logits, mask), dim=-1)
    return log_policy, torch.softmax(log_policy, dim=-1)


def sample_policy(policy: torch.Tensor) -> torch.Tensor:
    """One action per row of probabilities: the same draw as ``Categorical.sample()`` (one multinomial draw)."""
    return torch.multinomial(policy, 1, True).squeeze(-1)


class SparseRows(NamedTuple):
    """A batch of observations as their nonzero entries: row ``i`` of the dense batch is the sum over ``k`` of
    ``values[i, k]`` at column ``columns[i, k]``. Rows hold at most K entries; the rest of a row is padding
    (column 0, value 0), which adds exactly nothing."""

    columns: torch.Tensor  # (batch, K) int64
    values: torch.Tensor  # (batch, K) float32


def sparse_rows(obs: np.ndarray, width: int | None = None) -> SparseRows:
    """The nonzero entries of a (batch, size) float32 array, row by row in column order, as :class:`SparseRows`.

    ``width``: the number of slots per row (default: the most nonzeros of any row); it must be at least that.
    """
    obs = np.ascontiguousarray(obs, dtype=np.float32)
    if obs.ndim != 2:
        raise ValueError(f"sparse_rows: expected a (batch, size) array, got shape {obs.shape}")
    nonzero = obs != 0
    counts = nonzero.sum(axis=1)
    most = int(counts.max()) if len(counts) else 0
    width = most if width is None else int(width)
    if width < most:
        raise ValueError(f"sparse_rows: a row has {most} nonzero entries, more than width={width}")
    flat = np.flatnonzero(nonzero)  # (on the boolean array: twice as fast as on the floats)
    rows = flat // obs.shape[1]
    position = np.arange(flat.size) - np.repeat(np.cumsum(counts) - counts, counts)  # the entry's rank in its row
    at = rows * width + position
    out_columns = np.zeros((obs.shape[0], width), dtype=np.int64)
    out_values = np.zeros((obs.shape[0], width), dtype=np.float32)
    out_columns.ravel()[at] = flat - rows * obs.shape[1]
    out_values.ravel()[at] = obs.ravel()[flat]
    return SparseRows(torch.from_numpy(out_columns), torch.from_numpy(out_values))


class _SparseLinear(torch.autograd.Function):
    """``layer(dense rows)`` from :class:`SparseRows`: the forward pass sums the weight columns of the nonzero
    entries (``embedding_bag``, a twentieth of the dense product's work for the ~5%-dense observation); the
    weight's gradient is the dense product with the rows rebuilt exactly, as ``nn.Linear``'s own."""

    @staticmethod
    def forward(ctx: Any, columns: torch.Tensor, values: torch.Tensor, weight: torch.Tensor,
                bias: torch.Tensor, weight_t: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(columns, values)
        ctx.in_features = weight.shape[1]
        return nn.functional.embedding_bag(columns, weight_t, mode="sum", per_sample_weights=values) + bias

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[None, None, torch.Tensor | None, torch.Tensor | None, None]:
        columns, values = ctx.saved_tensors
        grad_weight = grad_bias = None
        if ctx.needs_input_grad[2]:
            dense = values.new_zeros(values.shape[0], ctx.in_features).scatter_add_(1, columns, values)
            grad_weight = grad.t() @ dense
        if ctx.needs_input_grad[3]:
            grad_bias = grad.sum(dim=0)
        return None, None, grad_weight, grad_bias, None


def sparse_linear(rows: SparseRows, layer: nn.Linear) -> torch.Tensor:
    """``layer`` applied to the dense rows that ``rows`` stands for (the same values up to float rounding)."""
    weight = layer.weight
    # embedding_bag reads the weight transposed (one row per input column). While acting, the weights do not
    # change from step to step: the transposed copy is kept until the weight changes (its version counter moves
    # with every in-place update: an optimizer step, load_state_dict).
    key = (weight.data_ptr(), weight._version, weight.device, weight.dtype)
    cached = getattr(layer, "_sparse_weight_t", None)
    if cached is not None and cached[0] == key:
        weight_t = cached[1]
    else:
        weight_t = weight.detach().t().contiguous()
        if not torch.is_grad_enabled():
            layer._sparse_weight_t = (key, weight_t)
    return _SparseLinear.apply(rows.columns, rows.values, weight, layer.bias, weight_t)


ARCHITECTURES = ("mlp", "cards")


class ActorCritic(nn.Module):
    """An actor-critic: a shared trunk, a policy head (one logit per action) and a value head.

    Two architectures read the same observation:

    * ``"mlp"``: an MLP trunk on the observation; one linear layer gives every logit.
    * ``"cards"``: the MLP trunk reads the observation and the summed embeddings of the
      held cards; each card action's logit comes from that card's own features
      (:mod:`blackout_training.agents.card_features`: would it win the trick, how many unseen cards
      outrank it, ...), embedded by one small network shared by all cards: the logit
      is the embedding's dot product with a query computed from the trunk's state,
      plus a bias read from the embedding alone (a pointer-network head). Bids stay a
      linear head on the trunk. Weights are shared across cards, so what the network
      learns about one card carries to the others: it learns card play from fewer games.

    Args:
        observation_size: length of the encoder's vector for the rules.
        num_actions: the rules' action space (cards then bids).
        hidden_sizes: widths of the trunk's hidden layers (ReLU).
        arch: "mlp" or "cards".
        rules: the rules (needed by "cards" with the rules-sized observation, which reads its blocks).
        card_width: width of the card embedding ("cards").
        observation: "rules" (the rules-sized observation and actions) or "universal" (every table).
        oracle_size: > 0 adds an *oracle critic*, for training only: a second value head that also reads
            this many privileged inputs (the other seats' hidden hands, :func:`table_oracle_inputs`). PPO's
            advantages then use its value (a baseline that knows the deal: lower-variance advantages, the
            same expected policy gradient); the actor and the ordinary value head never read them, so the
            network plays from the seat's view alone (:func:`export_policy` drops the oracle head).
    """

    def __init__(
        self,
        observation_size: int,
        num_actions: int,
        hidden_sizes: Sequence[int] = (256, 256),
        arch: str = "mlp",
        rules: Rules | None = None,
        card_width: int = 32,
        observation: str = "rules",
        oracle_size: int = 0,
    ) -> None:
        super().__init__()
        self.observation = observation_kind(observation)
        self.oracle_size = int(oracle_size)
        self._rules = rules  # (to rebuild it: without_oracle)
        if arch not in ARCHITECTURES:
            raise ValueError(f"arch: must be one of {', '.join(ARCHITECTURES)}, got {arch!r}")
        self.observation_size = int(observation_size)
        self.num_actions = int(num_actions)
        self.hidden_sizes = [int(width) for width in hidden_sizes]
        self.arch = arch
        self.card_width = int(card_width)
        width_in = self.observation_size
        if arch == "cards":
            if rules is None and self.observation == "rules":
                raise ValueError("arch 'cards' needs the rules (it reads the observation's blocks)")
            from .card_features import CardFeatures

            self.card_features = CardFeatures(rules, self.observation)
            if self.observation == "universal":
                self.num_cards, self.max_hand = UNIVERSAL_CARDS, MAX_HAND
            else:
                self.num_cards = rules.num_cards
                self.max_hand = min(rules.max_bid, rules.num_cards)
            w = self.card_width
            self.card_net = nn.Sequential(
                layer_init(nn.Linear(self.card_features.num_features, w)), nn.ReLU(),
                layer_init(nn.Linear(w, w)), nn.ReLU(),
            )
            # The held cards' summed embedding enters the first hidden layer through its own weights (the
            # same as one layer on [obs, held], without differentiating through the 800-wide observation).
            self.held_in = layer_init(nn.Linear(w, self.hidden_sizes[0]), bias_const=0.0)
        layers: list[nn.Module] = []
        for width in self.hidden_sizes:
            layers += [layer_init(nn.Linear(width_in, width)), nn.ReLU()]
            width_in = width
        self.trunk_mlp = nn.Sequential(*layers)
        if arch == "cards":
            # card logit = <card embedding, query(state)> + bias(card embedding); bids: linear on the state
            self.card_query = layer_init(nn.Linear(width_in, self.card_width), std=0.01)
            self.card_bias = layer_init(nn.Linear(self.card_width, 1), std=0.01)
            self.actor = layer_init(nn.Linear(width_in, self.num_actions - self.num_cards), std=0.01)
        else:
            # Small policy weights start the policy near uniform over legal actions.
            self.actor = layer_init(nn.Linear(width_in, self.num_actions), std=0.01)
        self.critic = layer_init(nn.Linear(width_in, 1), std=1.0)
        if self.oracle_size:  # value = w . relu(A state + B hidden_hands + b): training only (see the class doc)
            self.oracle_state = layer_init(nn.Linear(width_in, ORACLE_WIDTH))
            self.oracle_hands = layer_init(nn.Linear(self.oracle_size, ORACLE_WIDTH), bias_const=0.0)
            self.oracle_critic = layer_init(nn.Linear(ORACLE_WIDTH, 1), std=1.0)

    def reset_bid_head(self) -> None:
        """Re-initialise the bid logits' weights as a new network's (near-uniform bids), keeping everything else.

        For fine-tuning a network whose bids have collapsed onto one choice per hand size
        (``model.reset_bid_head``): PPO learns only from the actions it samples, so a bid
        played with probability 1 is never compared with the others.
        """
        if self.arch != "cards":
            raise ValueError("reset_bid_head: an 'mlp' network has no bid head of its own (arch 'cards' has)")
        with torch.no_grad():
            fresh = layer_init(nn.Linear(self.actor.in_features, self.actor.out_features), std=0.01)
            self.actor.weight.copy_(fresh.weight)
            self.actor.bias.copy_(fresh.bias)

    def card_inputs(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None:
        """The "cards" network's per-card inputs: ``(slots, held_weight, slot_card)``; None for "mlp".

        Only held cards can be played, so only they are embedded: the hand's cards (at
        most the largest hand of the match, K) are gathered into K slots. ``slots``
        (batch, K, F) holds their features, ``held_weight`` (batch, K) is 1 for a held
        card and 0 for a slot past the hand's size (which holds some unheld card, whose
        logit lands on an illegal, masked action), ``slot_card`` (batch, K) the card of
        each slot. They depend on the observation only (no weights), so a trainer may
        compute them once per observation and pass them to every forward pass.
        """
        if self.arch != "cards":
            return None
        with torch.no_grad():
            held_weight, slot_card = obs[:, : self.num_cards].topk(self.max_hand, dim=1)  # "hand" is the 1st block
            slots = self.card_features.at(obs, slot_card)  # (batch, K, F): the slots' cards' features only
        return slots, held_weight, slot_card

    def _forward(
        self,
        obs: torch.Tensor | None,
        need_logits: bool = True,
        inputs: tuple[torch.Tensor, ...] | None = None,
        sparse: SparseRows | None = None,
    ) -> tuple[torch.Tensor | None, torch.Tensor]:
        """(logits or None, trunk state); ``inputs``: :meth:`card_inputs` of ``obs``, when already computed;
        ``sparse``: :func:`sparse_rows` of ``obs``, when already computed (then ``obs`` may be None if ``inputs``
        is given or the arch is "mlp")."""
        first, rest = self.trunk_mlp[0], self.trunk_mlp[1:]
        hidden = first(obs) if sparse is None else sparse_linear(sparse, first)
        if self.arch == "mlp":
            state = rest(hidden)
            return (self.actor(state) if need_logits else None), state
        slots, held_weight, slot_card = inputs if inputs is not None else self.card_inputs(obs)
        cards = self.card_net(slots)  # (batch, K, w)
        held = (cards * held_weight[:, :, None]).sum(dim=1)
        state = rest(hidden + self.held_in(held))
        if not need_logits:
            return None, state
        slot_logits = torch.einsum("bkw,bw->bk", cards, self.card_query(state)) + self.card_bias(cards).squeeze(-1)
        card_logits = state.new_zeros(state.shape[0], self.num_cards).scatter(1, slot_card, slot_logits)
        return torch.cat([card_logits, self.actor(state)], dim=1), state

    def trunk(self, obs: torch.Tensor) -> torch.Tensor:
        """The shared state features, shape (batch, last hidden size)."""
        return self._forward(obs, need_logits=False)[1]

    def logits(self, obs: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """Action logits (masked to ``-1e9`` where ``mask`` is false, when given)."""
        logits = self._forward(obs)[0]
        return logits if mask is None else masked_logits(logits, mask)

    def get_value(self, obs: torch.Tensor) -> torch.Tensor:
        """State values, shape (batch,)."""
        return self.critic(self.trunk(obs)).squeeze(-1)

    def logits_and_value(self, obs: torch.Tensor, mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """:meth:`logits` and :meth:`get_value` of the same rows from one forward pass."""
        logits, state = self._forward(obs)
        return (logits if mask is None else masked_logits(logits, mask)), self.critic(state).squeeze(-1)

    def oracle_value(self, state: torch.Tensor, critic_inputs: torch.Tensor) -> torch.Tensor:
        """The oracle critic's values, shape (batch,): the trunk's state and the privileged inputs."""
        if not self.oracle_size:
            raise ValueError("this network has no oracle critic (model.critic: oracle adds one for training)")
        hidden = torch.relu(self.oracle_state(state) + self.oracle_hands(critic_inputs.to(state.dtype)))
        return self.oracle_critic(hidden).squeeze(-1)

    def get_action_and_value(
        self,
        obs: torch.Tensor,
        mask: torch.Tensor,
        action: torch.Tensor | None = None,
        inputs: tuple[torch.Tensor, ...] | None = None,
        sparse: SparseRows | None = None,
        critic_inputs: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """Sample (or score the given) actions: ``(action, log_prob, entropy, value)``.

        ``inputs``: :meth:`card_inputs` of ``obs`` when the caller already has them; ``sparse``:
        :func:`sparse_rows` of ``obs``, likewise (with both, ``obs`` may be None). ``critic_inputs``
        (training only, a network with an oracle critic): the value is then (batch, 2), the oracle
        critic's and the view critic's, both trained on the same returns.
        """
        logits, state = self._forward(obs, inputs=inputs, sparse=sparse)
        log_policy, policy = masked_policy(logits, mask)
        if action is None:
            action = sample_policy(policy)
        entropy = -(log_policy * policy).sum(dim=-1)
        value = self.critic(state).squeeze(-1)
        if critic_inputs is not None:
            value = torch.stack([self.oracle_value(state, critic_inputs), value], dim=1)
        return action, log_policy.gather(-1, action[:, None]).squeeze(-1), entropy, value

    def sample_action(
        self,
        obs: torch.Tensor,
        mask: torch.Tensor,
        inputs: tuple[torch.Tensor, ...] | None = None,
        sparse: SparseRows | None = None,
        critic_inputs: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Sample actions while acting: ``(action, log_prob, value)``, as :meth:`get_action_and_value`
        without the entropy (the same random draws, so the same actions for the same generator state).
        With ``critic_inputs`` the value is the oracle critic's (the one PPO's advantages use)."""
        logits, state = self._forward(obs, inputs=inputs, sparse=sparse)
        log_policy, policy = masked_policy(logits, mask)
        action = sample_policy(policy)
        value = self.critic(state).squeeze(-1) if critic_inputs is None else self.oracle_value(state, critic_inputs)
        return action, log_policy.gather(-1, action[:, None]).squeeze(-1), value

    def greedy_action(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """The most probable legal action of every row."""
        return self.logits(obs, mask).argmax(dim=-1)

    def spec(self) -> dict[str, Any]:
        """What :func:`make_model` needs to rebuild this network's shape (kept in checkpoints)."""
        spec: dict[str, Any] = {"hidden_sizes": list(self.hidden_sizes), "arch": self.arch}
        if self.arch == "cards":  # (an "mlp" network has no card embedding)
            spec["card_width"] = self.card_width
        if self.observation == "universal":
            spec["observation"] = self.observation
        if self.oracle_size:
            spec["oracle_size"] = self.oracle_size
        return spec

    def without_oracle(self) -> ActorCritic:
        """A copy of this network without its oracle critic (the same play and view value): what ships."""
        model = ActorCritic(self.observation_size, self.num_actions, self.hidden_sizes, self.arch, self._rules,
                            self.card_width, self.observation)
        model.load_state_dict({k: v for k, v in self.state_dict().items() if not k.startswith("oracle_")})
        return model


def oracle_size(rules: Rules, observation: str = "rules") -> int:
    """The oracle critic's privileged inputs: every other seat's hand, in the layout of the observation
    (:func:`oracle_inputs` for the rules-sized one, :func:`universal_oracle_inputs` for the universal one)."""
    if observation_kind(observation) == "universal":
        return (MAX_PLAYERS - 1) * UNIVERSAL_CARDS
    return (rules.num_players - 1) * rules.num_cards


def oracle_inputs(hands: np.ndarray, player: np.ndarray, num_cards: int) -> np.ndarray:
    """The oracle critic's inputs: the hidden hands of every other seat, clockwise from the acting one.

    ``hands`` (batch, n) uint64 card sets (bit c = card c, the batched engine's ``hands``), ``player``
    (batch,) the acting seat: (batch, (n - 1) * num_cards) uint8, seat ``player + 1``'s cards first.
    """
    hands = np.asarray(hands, dtype=np.uint64)
    n = hands.shape[1]
    seats = (np.asarray(player)[:, None] + np.arange(1, n)) % n
    others = np.take_along_axis(hands, seats, axis=1)  # (batch, n - 1)
    bits = np.unpackbits(others.astype("<u8").view(np.uint8).reshape(len(hands), n - 1, 8), axis=2,
                         bitorder="little")
    return np.ascontiguousarray(bits[:, :, :num_cards]).reshape(len(hands), (n - 1) * num_cards)


def universal_oracle_inputs(hands: np.ndarray, player: np.ndarray) -> np.ndarray:
    """:func:`oracle_inputs` in the universal layout, the same size at every table: (batch, 6 * 54) uint8.

    Row ``k`` (54 columns) holds relative seat ``k + 1``'s hand, clockwise from the acting seat, as the
    universal observation's per-seat rows do; card ``c`` is column ``c`` (the universal observation's card
    columns: jokers 52 and 53); the rows of seats the table lacks and the jokers it lacks are 0.
    """
    rows = MAX_PLAYERS - 1
    present = oracle_inputs(hands, player, UNIVERSAL_CARDS)  # (batch, (n - 1) * 54): card c is bit c, as in the view
    out = np.zeros((len(present), rows * UNIVERSAL_CARDS), dtype=np.uint8)
    out[:, : present.shape[1]] = present
    return out


def table_oracle_inputs(hands: np.ndarray, player: np.ndarray, rules: Rules, observation: str = "rules") -> np.ndarray:
    """The oracle critic's inputs for the observation a network reads: :func:`oracle_inputs` of the rules' table
    ("rules"), or :func:`universal_oracle_inputs` ("universal"); ``oracle_size(rules, observation)`` wide."""
    if observation_kind(observation) == "universal":
        return universal_oracle_inputs(hands, player)
    return oracle_inputs(hands, player, rules.num_cards)


def make_model(
    rules: Rules,
    hidden_sizes: Sequence[int] = (256, 256),
    arch: str = "mlp",
    card_width: int = 32,
    observation: str = "rules",
    oracle: bool = False,
) -> ActorCritic:
    """A fresh network for the rules' observation and actions (or the universal ones, for every table);
    ``oracle``: with an oracle critic for training (its inputs in the observation's layout: :func:`oracle_size`)."""
    critic_size = oracle_size(rules, observation) if oracle else 0
    if observation_kind(observation) == "universal":
        return ActorCritic(universal_size(), UNIVERSAL_NUM_ACTIONS, hidden_sizes, arch, rules, card_width, observation,
                           oracle_size=critic_size)
    return ActorCritic(encoding.observation_size(rules), rules.num_actions, hidden_sizes, arch, rules, card_width,
                       oracle_size=critic_size)


# ---------------------------------------------------------------- checkpoints
def _layout_key(rules: Rules, observation: str = "rules") -> list[list[Any]]:
    # Name, offset and size of every block: two layouts with equal keys read a vector identically.
    layout = universal_layout() if observation == "universal" else encoding.observation_layout(rules)
    return [[str(block.name), int(block.offset), int(block.size)] for block in layout]


def save_checkpoint(
    path: str | os.PathLike[str],
    model: ActorCritic,
    rules: Rules,
    extra: Mapping[str, Any] | None = None,
) -> Path:
    """Write a checkpoint atomically (a temporary file in the same folder, then a rename).

    ``extra`` holds anything else to keep (the training state for ``--resume``,
    the run's config); it must be plain data or tensors.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "format": CHECKPOINT_FORMAT,
        "version": CHECKPOINT_VERSION,
        "model_state": {k: v.detach().cpu() for k, v in model.state_dict().items()},
        "observation_size": model.observation_size,
        "num_actions": model.num_actions,
        "hidden_sizes": list(model.hidden_sizes),
        "arch": model.arch,
        "card_width": model.card_width,
        "observation": model.observation,
        "oracle_size": model.oracle_size,
        "observation_layout": _layout_key(rules, model.observation),
        "rules": rules.to_dict(),
        "extra": dict(extra or {}),
    }
    with replaced_atomically(path, binary=True) as file:
        torch.save(payload, file)
    return path


def _renamed(key: str) -> str:
    # Checkpoints written before the "cards" architecture named the MLP trunk "trunk".
    return "trunk_mlp." + key[len("trunk."):] if key.startswith("trunk.") else key


def _rules_differences(saved: Mapping[str, Any], rules: Rules) -> list[str]:
    current = rules.to_dict()
    return [
        f"{key}: checkpoint {saved.get(key)!r}, asked {current.get(key)!r}"
        for key in sorted(set(saved) | set(current))
        if key != "description" and saved.get(key) != current.get(key)
    ]


def nonfinite_weights(model: nn.Module) -> str | None:
    """The name of the first weights of ``model`` holding a NaN or an infinity (None: all finite)."""
    return next((name for name, tensor in model.state_dict().items()
                 if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all())), None)


def check_not_diverged(model: nn.Module, advice: str, where: str = "") -> None:
    """ValueError (ending with ``advice``) when training left ``model``'s weights not finite: called before
    anything saves it, so no checkpoint ever holds NaN weights."""
    broken = nonfinite_weights(model)
    if broken is not None:
        at = f" ({where})" if where else ""
        raise ValueError(f"the training diverged{at}: the weights {broken!r} are not finite (NaN or infinite); {advice}")


def _damaged_member(path: Path) -> str | None:
    """The first part of a zip checkpoint whose bytes fail their CRC (None: every part is intact, or not a zip)."""
    try:
        with zipfile.ZipFile(path) as archive:
            return archive.testzip()
    except (zipfile.BadZipFile, OSError):  # torch read it: an older, non-zip checkpoint
        return None
    except zipfile.LargeZipFile:  # pragma: no cover - (torch writes zip64 archives that zipfile reads)
        return None


def read_checkpoint(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The raw checkpoint dictionary, after checking that the file is one of ours."""
    path = Path(path)
    if not path.exists():
        raise CheckpointError(f"checkpoint {str(path)!r} does not exist")
    if path.is_dir():
        raise CheckpointError(f"checkpoint {str(path)!r} is a folder, not a checkpoint file")
    try:
        size = path.stat().st_size
        file = path.open("rb")
    except OSError as error:
        raise CheckpointError(f"checkpoint {str(path)!r} cannot be read: {error.strerror or error}") from None
    with file:
        try:
            payload = torch.load(file, map_location="cpu", weights_only=True) if size else None
        except Exception:  # noqa: BLE001 - torch raises many types for a damaged file (an OSError from a truncated zip too)
            # Torch's own message advises weights_only=False (which would run code from the file): never repeat it.
            raise CheckpointError(
                f"checkpoint {str(path)!r} is not a torch checkpoint (corrupt, truncated or another kind of file)"
            ) from None
    if not size:
        raise CheckpointError(f"checkpoint {str(path)!r} is empty (0 bytes)")
    damaged = _damaged_member(path)
    if damaged is not None:  # (torch reads a zip checkpoint without checking its CRCs: damaged weights would load)
        raise CheckpointError(f"checkpoint {str(path)!r} is corrupt: its part {damaged!r} fails its checksum")
    if not isinstance(payload, dict) or payload.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError(f"{str(path)!r} is not a Blackout PPO checkpoint")
    if payload.get("version") != CHECKPOINT_VERSION:
        raise CheckpointError(
            f"checkpoint {str(path)!r} has format version {payload.get('version')!r}; "
            f"this code reads version {CHECKPOINT_VERSION}"
        )
    return payload


def load_checkpoint(
    path: str | os.PathLike[str], rules: Rules | str | Mapping[str, Any] | None = None
) -> tuple[ActorCritic, Rules, dict[str, Any]]:
    """The network of a checkpoint, the rules it was trained for, and its raw dictionary.

    With ``rules`` given, a checkpoint trained under other rules is refused (naming
    the options that differ). In every case a checkpoint whose observation layout
    differs from what the encoder produces now for its rules is refused.
    """
    payload = read_checkpoint(path)
    try:
        trained_rules = Rules.from_dict(payload["rules"])
    except (KeyError, ValueError) as error:
        raise CheckpointError(f"checkpoint {str(path)!r} holds no valid rules: {error}") from None
    observation = payload.get("observation", "rules")
    if observation not in ("rules", "universal"):
        raise CheckpointError(f"checkpoint {str(path)!r} reads an unknown observation {observation!r}")
    universal = observation == "universal"
    if rules is not None and not universal:  # a universal network plays every table
        asked = Rules.resolve(rules)
        differences = _rules_differences(trained_rules.to_dict(), asked)  # both as Rules store them ("full" a number)
        if differences:
            raise CheckpointError(
                f"checkpoint {str(path)!r} was trained for other rules ({'; '.join(differences)}); "
                "it reads the rules-sized observation of its own table. A policy for every table reads "
                'observation="universal": train one with configs/train/generalist.yaml'
            )
    expected_layout = _layout_key(trained_rules, observation)
    saved_layout = payload.get("observation_layout")
    if saved_layout != expected_layout:
        blocks = saved_layout if isinstance(saved_layout, list) else []
        saved_names = [block[0] if isinstance(block, (list, tuple)) and block else block for block in blocks]
        expected_names = [block[0] for block in expected_layout]
        raise CheckpointError(
            f"checkpoint {str(path)!r} reads another observation layout than blackout_env.game.encoding produces "
            f"(checkpoint: {len(saved_names)} blocks, size {payload.get('observation_size')}; "
            f"encoder: {len(expected_names)} blocks, size "
            f"{universal_size() if universal else encoding.observation_size(trained_rules)}); "
            "retrain it with this version"
        )
    wanted_actions = UNIVERSAL_NUM_ACTIONS if universal else trained_rules.num_actions
    if payload.get("num_actions") != wanted_actions:
        raise CheckpointError(
            f"checkpoint {str(path)!r} has {payload.get('num_actions')} actions; its observation needs {wanted_actions}"
        )
    try:
        model = ActorCritic(
            payload["observation_size"], payload["num_actions"], payload["hidden_sizes"],
            arch=payload.get("arch", "mlp"), rules=trained_rules, card_width=payload.get("card_width", 32),
            observation=observation, oracle_size=payload.get("oracle_size", 0),
        )
        state = {_renamed(key): value for key, value in payload["model_state"].items()}
        model.load_state_dict(state)
    except (AttributeError, KeyError, RuntimeError, TypeError, ValueError) as error:
        # torch lists every mismatched tensor on its own line: the first is enough to name the problem
        lines = [line.strip() for line in str(error).splitlines() if line.strip()]
        more = f" (and {len(lines) - 2} more)" if len(lines) > 2 else ""
        raise CheckpointError(
            f"checkpoint {str(path)!r} holds no usable network: {' '.join(lines[:2])}{more}"
        ) from None
    broken = nonfinite_weights(model)
    if broken is not None:
        raise CheckpointError(f"checkpoint {str(path)!r} holds no usable network: its weights {broken!r} are not finite "
                              "(NaN or infinite: a run that diverged, or a damaged file)")
    model.eval()
    return model, trained_rules, payload


# ------------------------------------------------------------------ as a bot
class PolicyBot:
    """A trained network as a bot: ``act(view)`` encodes the view and picks an action.

    A universal network (``model.observation == "universal"``) plays the rules of
    each view it is given: its observation and mask are translated to the
    universal ones and its action back to the rules' action.

    Args:
        model: the network.
        rules: the rules it plays (views must be of these rules, unless the network is universal).
        name: the bot's name in tables.
        greedy: pick the most probable legal action (default) or sample from the policy.
        seed: seeds sampling (only used when ``greedy`` is false).
        reward, reward_scale: what the value head was trained to predict (the training config's
            ``env.reward`` and ``env.reward_scale``; :func:`load_policy_bot` reads them from the
            checkpoint): with them :meth:`explain` gives the value in points of the hand's score.
    """

    def __init__(
        self,
        model: ActorCritic,
        rules: Rules,
        name: str = "ppo",
        greedy: bool = True,
        seed: int | None = None,
        reward: str | None = None,
        reward_scale: float | None = None,
    ) -> None:
        self.model = model.cpu().eval()
        self.rules = rules
        self.name = name
        self.greedy = greedy
        self.reward = reward
        self.reward_scale = reward_scale
        self.checkpoint: Path | None = None
        """The checkpoint file the network was loaded from (set by :func:`load_policy_bot`), else None."""
        self.rng = np.random.default_rng(seed)
        self._generator = torch.Generator().manual_seed(int(self.rng.integers(2**62)))

    @property
    def observation(self) -> str:
        """The observation the network reads (``"rules"`` or ``"universal"``): what ``act_batch`` takes."""
        return self.model.observation

    def seed(self, seed: int | None) -> None:
        """Reseed the sampling generators."""
        self.rng = np.random.default_rng(seed)
        self._generator = torch.Generator().manual_seed(int(self.rng.integers(2**62)))

    def act_batch(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Actions for a batch of observations and int8 masks, shape (batch,), in the network's own spaces
        (universal observations, masks and actions for a universal network)."""
        with torch.inference_mode():
            obs_t, mask_t = self._tensors(obs, mask)
            return self._pick(self.model.logits(obs_t, mask_t)).numpy()

    @staticmethod
    def _tensors(obs: np.ndarray, mask: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.as_tensor(np.asarray(obs, dtype=np.float32)), torch.as_tensor(np.asarray(mask) != 0)

    def _pick(self, logits: torch.Tensor) -> torch.Tensor:
        """The action of each row of masked logits: the most probable, or a draw from the sampling generator."""
        if self.greedy:
            return logits.argmax(dim=-1)
        probs = torch.softmax(logits, dim=-1)
        return torch.multinomial(probs, 1, generator=self._generator).squeeze(-1)

    def _network_inputs(self, view: PlayerView) -> tuple[Rules, np.ndarray, np.ndarray]:
        """The rules of ``view`` and its observation and mask (batches of one) in the network's own spaces."""
        if not view.legal_actions:
            raise ValueError(f"{self.name}: player {view.player} has no legal action now (phase {view.phase})")
        rules = view.rules if self.model.observation == "universal" else self.rules
        mask = np.zeros((1, rules.num_actions), dtype=np.int8)
        mask[0, list(view.legal_actions)] = 1
        obs = encoding.encode(view)[None, :]
        if self.model.observation == "universal":
            obs, mask = universal_observation(obs, rules), universal_action_mask(mask, rules)
        return rules, obs, mask

    def act(self, view: PlayerView) -> int:
        """The action for one player's view (always one of ``view.legal_actions``)."""
        rules, obs, mask = self._network_inputs(view)
        with one_thread():
            action = self.act_batch(obs, mask)
        return int((rules_actions(action, rules) if self.model.observation == "universal" else action)[0])

    def action_probabilities(self, view: PlayerView) -> dict[int, float]:
        """The policy's probability of each legal action of ``view`` (the prior of ``ppo+search``)."""
        rules, obs, mask = self._network_inputs(view)
        with one_thread(), torch.inference_mode():
            logits = self.model.logits(*self._tensors(obs, mask))
        return self._legal_probabilities(logits, mask, rules)

    def _legal_probabilities(self, logits: torch.Tensor, mask: np.ndarray, rules: Rules) -> dict[int, float]:
        """The softmax of one row of masked logits, by legal action of the rules (not the network's space)."""
        probabilities = torch.softmax(logits, dim=-1)[0].numpy()
        actions = np.flatnonzero(mask[0])
        ours = rules_actions(actions, rules) if self.model.observation == "universal" else actions
        return {int(a): float(probabilities[u]) for a, u in zip(ours, actions)}

    def explain(self, view: PlayerView) -> Explanation:
        """The action :meth:`act` returns (the same draw when sampling), the policy's probability of each legal
        action, and the value head's estimate of the hand's score for the acting seat, from one forward pass."""
        rules, obs, mask = self._network_inputs(view)
        with one_thread(), torch.inference_mode():
            logits, value = self.model.logits_and_value(*self._tensors(obs, mask))
            chosen = self._pick(logits).numpy()
        action = int((rules_actions(chosen, rules) if self.model.observation == "universal" else chosen)[0])
        probabilities = self._legal_probabilities(logits, mask, rules)
        estimate = float(value[0])
        if self.reward_scale:
            estimate /= self.reward_scale  # back to points of the hand's score
            worth = "of the hand's score" if self.reward == "score" else f"of the hand's {self.reward} reward"
            unit = f"its value head's estimate {worth} for the acting seat, in points"
        else:
            unit = "its value head's estimate of the return to come, in training reward units"
        how = "it plays the most probable action" if self.greedy else "it samples its action from them"
        note = f"probabilities of the trained policy's actions and {unit}; {how}"
        return Explanation(action, "policy", action_reasons(view.legal_actions, probabilities), estimate, note)


def load_policy_bot(
    path: str | os.PathLike[str] | None = None,
    rules: Rules | str | Mapping[str, Any] | None = None,
    seed: int | None = None,
    name: str | None = None,
    greedy: bool = True,
) -> PolicyBot:
    """A :class:`PolicyBot` from a checkpoint (default: the shipped ``ppo`` checkpoint, the generalist).

    ``rules`` (when given) must be the rules a rules-sized checkpoint was trained
    for; a universal checkpoint plays any rules.
    """
    path = SHIPPED_CHECKPOINT if path is None else Path(path)
    model, trained_rules, payload = load_checkpoint(path, rules)
    label = name or SHIPPED_NAMES.get(path, f"ppo:{path}")
    plays = Rules.resolve(rules) if rules is not None and model.observation == "universal" else trained_rules
    reward, reward_scale = _trained_reward(payload)
    bot = PolicyBot(model, plays, name=label, greedy=greedy, seed=seed, reward=reward, reward_scale=reward_scale)
    bot.checkpoint = path  # what a dataset's metadata names (and hashes) as the policy's weights
    return bot


def _trained_reward(payload: Mapping[str, Any]) -> tuple[str | None, float | None]:
    """The reward mode and scale that a checkpoint's value head learnt (from its run's config; None: unknown)."""
    extra = payload.get("extra")
    config = extra.get("config") if isinstance(extra, Mapping) else None
    env = config.get("env") if isinstance(config, Mapping) else None
    if not isinstance(env, Mapping):
        return None, None
    reward, scale = env.get("reward"), env.get("reward_scale")
    if env.get("reward_norm", "none") != "none":  # per-table units: no one factor turns them back into points
        return reward if isinstance(reward, str) else None, None
    if not isinstance(reward, str) or isinstance(scale, bool) or not isinstance(scale, (int, float)) or not (
        math.isfinite(scale) and scale > 0
    ):
        return None, None
    return reward, float(scale)


def load_ppo_policy(argument: str | None, rules: Rules | None, seed: int | None) -> PolicyBot:
    """The loader behind the policy specs "ppo" (the shipped generalist) and "ppo:PATH" (``blackout_training.agents.policies``)."""
    return load_policy_bot(argument, rules, seed=seed)


load_ppo_policy.path_argument = True  # "ppo:PATH" names a file (blackout_env.agents.policies.absolute_paths)


def load_ppo_standard_policy(argument: str | None, rules: Rules | None, seed: int | None) -> PolicyBot:
    """The loader behind the policy spec "ppo-standard": the shipped standard 4-player specialist."""
    if argument is not None:
        raise ValueError(f"policy 'ppo-standard:{argument}' takes no argument (a checkpoint file is ppo:PATH)")
    return load_policy_bot(SPECIALIST_CHECKPOINT, rules, seed=seed)


def export_policy(checkpoint: str | os.PathLike[str], out: str | os.PathLike[str]) -> Path:
    """Write a small, weights-only copy of a training checkpoint (no optimiser or pool), e.g. to ship it.

    The copy keeps the rules, the observation layout, the run's config and how far it trained; an oracle
    critic (training only, :class:`ActorCritic`) is left out: the copy reads the seat's view alone.
    """
    model, rules, payload = load_checkpoint(checkpoint)
    if model.oracle_size:
        model = model.without_oracle()
    state = payload.get("extra", {})
    keep = {key: state[key] for key in ("global_step", "update", "config") if key in state}
    return save_checkpoint(out, model, rules, extra={**keep, "exported_from": str(checkpoint)})
