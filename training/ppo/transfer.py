"""Carry a network trained for one table over to the universal observation, acting exactly as before.

A rules-sized network (:func:`blackout_training.agents.policy_net.make_model` with the
default ``observation="rules"``) reads one table's observation; a universal one
reads every table's. :func:`universal_from_rules` builds the universal network
of the same shape whose outputs at the source table equal the source network's:

* the first layer's column for each rules-sized entry moves to the universal
  column that :func:`blackout_env.game.universal.universal_columns` names, divided by
  the entry's scale (the counts rescaled from the table's largest hand to 18);
  the universal columns the table never fills (the rules block, seats it lacks,
  the jokers' cards) start at zero, so at the source table they add nothing;
* the ``cards`` network's per-card features keep their columns; the void
  features of the seats the table lacks start at zero;
* the bid head keeps its rows for the bids the table allows; a larger bid starts
  as a copy of the largest one. Card rows (``arch="mlp"``) keep their card.

Every other weight is copied, except an oracle critic's (``model.critic: oracle``, training only): its
inputs are the table's hidden hands in the rules-sized layout, so the universal network starts without
one, and a universal oracle run gives it a fresh one. Training over many tables then starts from the
specialist's play instead of from random play (``model.init_checkpoint`` with a
rules-sized checkpoint in a universal config does this).
"""

from __future__ import annotations

import torch

from blackout_env import Rules
from blackout_env.game import encoding
from blackout_env.game.universal import (
    UNIVERSAL_CARDS,
    UNIVERSAL_NUM_ACTIONS,
    universal_columns,
    universal_size,
)

from ..agents.policy_net import ActorCritic

__all__ = ["universal_from_rules"]


@torch.no_grad()
def universal_from_rules(model: ActorCritic, rules: Rules) -> ActorCritic:
    """A universal network that acts as ``model`` (a rules-sized network for ``rules``) does at that table."""
    if model.observation != "rules":
        raise ValueError("universal_from_rules: the network already reads the universal observation")
    rules = Rules.resolve(rules)
    if model.num_actions != rules.num_actions:
        raise ValueError(
            f"universal_from_rules: the network has {model.num_actions} actions, the rules {rules.num_actions}"
        )
    if model.observation_size != encoding.observation_size(rules):
        raise ValueError(
            f"universal_from_rules: the network reads {model.observation_size} inputs, the rules' observation has "
            f"{encoding.observation_size(rules)}: it was trained for other rules"
        )
    target = ActorCritic(universal_size(), UNIVERSAL_NUM_ACTIONS, model.hidden_sizes, model.arch, rules,
                         model.card_width, "universal")
    source_state = model.state_dict()
    state = target.state_dict()
    for key, value in source_state.items():  # same shapes: copied as they are (an oracle critic is not carried)
        if key in state and state[key].shape == value.shape:
            state[key] = value.clone()

    first = "trunk_mlp.0.weight"
    source, destination, scale = (torch.as_tensor(a) for a in universal_columns(rules))
    weight = torch.zeros_like(state[first])
    weight[:, destination] = source_state[first][:, source] / scale.to(weight.dtype)
    state[first] = weight

    num_cards = rules.num_cards
    bids = rules.num_actions - num_cards  # bids 0..max_bid
    if model.arch == "cards":
        features = source_state["card_net.0.weight"]
        card_in = torch.zeros_like(state["card_net.0.weight"])
        card_in[:, : features.shape[1]] = features  # the first seats' voids keep their columns
        state["card_net.0.weight"] = card_in
        bid_rows, card_rows = slice(0, None), None
    else:
        bid_rows, card_rows = slice(num_cards, None), slice(0, num_cards)
    for name in ("actor.weight", "actor.bias"):
        old, new = source_state[name], torch.zeros_like(state[name])
        offset = 0 if model.arch == "cards" else UNIVERSAL_CARDS
        if card_rows is not None:
            new[:num_cards] = old[card_rows]
        new[offset : offset + bids] = old[bid_rows]
        new[offset + bids :] = old[-1]  # larger bids than the table allows: the largest one's row
        state[name] = new
    target.load_state_dict(state)
    target.train(model.training)
    return target
