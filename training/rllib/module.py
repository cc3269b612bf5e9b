"""Our actor-critic as an RLlib RLModule, and RLlib checkpoints as Blackout policies.

:class:`BlackoutRLModule` is RLlib's action-masking RLModule pattern (new API
stack) around :class:`blackout_training.agents.policy_net.ActorCritic`, the native trainer's
network: it reads the ``{"observation", "action_mask"}`` dict of the AEC env and of
:class:`blackout_training.rllib.env.BatchedMultiAgentEnv`, pushes illegal actions'
logits to ``-1e9`` (so they are never sampled), and gives RLlib's PPO the state
value through ``ValueFunctionAPI``. Its ``model_config`` holds the rules and the
network's shape, so a checkpoint knows what it was trained for.

Interop: :func:`load_rllib_module` reads the module back from an RLlib checkpoint
(an ``Algorithm.save_to_path`` folder, the module's own folder, or a run folder of
``blackout train`` with ``algo: rllib_ppo``) without starting Ray;
:func:`load_rllib_policy` is the ``rllib:PATH`` policy spec of ``blackout eval`` and
``blackout play``; :func:`export_rllib_checkpoint` writes a native checkpoint that
``ppo:PATH`` reads.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from ray.rllib.algorithms.ppo.torch.ppo_torch_learner import PPOTorchLearner
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.torch import TorchRLModule
from ray.rllib.utils.metrics import NUM_ENV_STEPS_SAMPLED_LIFETIME

from blackout_env import Rules
from blackout_env.game import encoding

from ..agents.policy_net import (
    ActorCritic,
    CheckpointError,
    PolicyBot,
    _layout_key,
    _rules_differences,
    make_model,
    masked_logits,
    save_checkpoint,
)

__all__ = [
    "MODULE_ID",
    "BlackoutRLModule",
    "DecisionScheduledPPOLearner",
    "export_rllib_checkpoint",
    "find_module_dir",
    "load_rllib_module",
    "load_rllib_policy",
    "module_config",
]

MODULE_ID = "blackout"
"""The id of the one shared module every seat maps to (self-play)."""
RLLIB_CHECKPOINT_DIR = "rllib_checkpoint"
"""The RLlib checkpoint's folder inside a run folder."""


class DecisionScheduledPPOLearner(PPOTorchLearner):
    """RLlib's PPO learner, with its schedules (the annealed ``lr``) read by the learner's decisions.

    RLlib schedules by env steps sampled. One step of our batched env is one decision of
    every game in self-play, but in a league (``opponents.mode: pool``) it is one decision of
    each game whose seat to act is the learner's, a number that varies; the driver sets
    :attr:`decisions` (the learner's decisions sampled so far, the run's ``global_step``
    after the update's sample) before each update, and the schedules read that.
    """

    decisions = 0

    def after_gradient_based_update(self, *, timesteps: dict[str, Any]) -> None:
        super().after_gradient_based_update(timesteps={**timesteps, NUM_ENV_STEPS_SAMPLED_LIFETIME: self.decisions})


def module_config(rules: Rules, hidden_sizes: list[int], arch: str, card_width: int) -> dict[str, Any]:
    """The ``model_config`` of a :class:`BlackoutRLModule`: the rules, the observation layout and the network."""
    return {
        "rules": rules.to_dict(),
        "observation_layout": _layout_key(rules),
        "hidden_sizes": list(hidden_sizes),
        "arch": arch,
        "card_width": int(card_width),
    }


class BlackoutRLModule(TorchRLModule, ValueFunctionAPI):
    """The native actor-critic (``model.arch`` "mlp" or "cards") as a masked PPO RLModule."""

    def setup(self) -> None:
        config = self.model_config
        self.rules = Rules.from_dict(config["rules"])
        self.net: ActorCritic = make_model(self.rules, config["hidden_sizes"], config["arch"], config["card_width"])

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        logits, state = self.net._forward(obs["observation"])
        return {Columns.ACTION_DIST_INPUTS: masked_logits(logits, obs["action_mask"]), Columns.EMBEDDINGS: state}

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        return self._forward(batch, **kwargs)

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> Any:
        """State values; ``embeddings``: the trunk state of the same forward pass, when at hand."""
        if embeddings is None:
            embeddings = self.net.trunk(batch[Columns.OBS]["observation"])
        return self.net.critic(embeddings).squeeze(-1)


# ------------------------------------------------------------------ interop
def find_module_dir(path: str | os.PathLike[str]) -> Path:
    """The module's folder inside an RLlib checkpoint (or a run folder); CheckpointError when there is none."""
    path = Path(path)
    if not path.exists():
        raise CheckpointError(f"RLlib checkpoint {str(path)!r} does not exist")
    inside = Path("learner_group", "learner", "rl_module", MODULE_ID)
    # (an Algorithm checkpoint has a class_and_ctor_args.pkl of its own: look for the module's first)
    candidates = [path / inside, path / RLLIB_CHECKPOINT_DIR / inside, path]
    for candidate in candidates:
        if (candidate / "class_and_ctor_args.pkl").is_file():
            return candidate
    raise CheckpointError(
        f"{str(path)!r} is not an RLlib checkpoint of a Blackout policy (no module {MODULE_ID!r} in it; "
        f"pass the folder that Algorithm.save_to_path wrote, or a run folder of blackout train with algo: rllib_ppo)"
    )


def load_rllib_module(path: str | os.PathLike[str], rules: Rules | str | None = None) -> tuple[ActorCritic, Rules]:
    """The network and rules of an RLlib checkpoint; with ``rules``, one trained for other rules is refused."""
    module_dir = find_module_dir(path)
    from ray.rllib.core.rl_module.rl_module import RLModule

    # (RLlib warns about a deprecation inside its own code at every module construction)
    quiet = [logging.getLogger(name) for name in ("ray.rllib", "ray._common.deprecation")]
    levels = [logger.level for logger in quiet]
    for logger in quiet:
        logger.setLevel(logging.ERROR)
    try:
        module = RLModule.from_checkpoint(str(module_dir.resolve()))
    except Exception as error:  # RLlib raises many types for a damaged checkpoint
        raise CheckpointError(
            f"RLlib checkpoint {str(path)!r} cannot be read: {type(error).__name__}: {error}"
        ) from None
    finally:
        for logger, level in zip(quiet, levels):
            logger.setLevel(level)
    if not isinstance(module, BlackoutRLModule):
        raise CheckpointError(f"RLlib checkpoint {str(path)!r} holds a {type(module).__name__}, not a Blackout policy")
    saved = module.model_config
    if rules is not None:
        differences = _rules_differences(saved["rules"], Rules.resolve(rules))
        if differences:
            raise CheckpointError(f"RLlib checkpoint {str(path)!r} was trained for other rules ({'; '.join(differences)})")
    if saved.get("observation_layout") != _layout_key(module.rules):
        raise CheckpointError(
            f"RLlib checkpoint {str(path)!r} reads another observation layout than blackout_env.game.encoding produces "
            f"(size now {encoding.observation_size(module.rules)}); retrain it with this version"
        )
    return module.net.eval(), module.rules


def load_rllib_policy(argument: str | None, rules: Rules | None, seed: int | None) -> PolicyBot:
    """The loader behind the policy spec "rllib:PATH" (``blackout_training.agents.policies``)."""
    if not argument:
        raise ValueError("policy 'rllib' needs a checkpoint: rllib:PATH (an RLlib checkpoint or a run folder)")
    net, trained_rules = load_rllib_module(argument, rules)
    return PolicyBot(net, trained_rules, name=f"rllib:{argument}", seed=seed)


def export_rllib_checkpoint(path: str | os.PathLike[str], out: str | os.PathLike[str], **extra: Any) -> Path:
    """Write the policy of an RLlib checkpoint as a native checkpoint (``ppo:OUT`` reads it)."""
    net, rules = load_rllib_module(path)
    return save_checkpoint(out, net, rules, extra={"exported_from": str(path), **extra})
