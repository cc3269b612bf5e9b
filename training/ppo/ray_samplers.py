"""``algo: ppo_ray``: the native PPO trainer with its rollouts in Ray actors, on this machine or a Ray cluster.

:func:`blackout_training.ppo.trainer.train` runs the whole run as for ``algo: ppo`` (the run
folder, logs, checkpoints, ``--resume``, evaluation, the PPO update); only the rollout
moves. ``ray.num_samplers`` actors (:class:`SamplerActor`, ``ray.sampler_cpus`` CPUs
each, spread over the cluster's nodes) each hold a :class:`blackout_training.ppo.sampler.Sampler`
of ``env.num_envs`` games with its own deals and a CPU copy of the network. At every update
the learner puts its weights in Ray's object store once; every sampler loads them, plays
one rollout, computes its per-seat returns and advantages, and returns the trainable
decisions as arrays (sparse observation rows, masks, actions, log-probs, values,
advantages, returns; :meth:`~blackout_training.ppo.sampler.Rollout.arrays`), which the
learner concatenates in sampler order. A league's snapshots (``opponents.mode: pool``)
go to every sampler when the learner takes one.

Seeds: sampler 0 of a fresh run deals and samples exactly as the native trainer does,
so one sampler gives the native run's numbers; sampler ``i`` > 0 (and every sampler of
a resumed run) draws its own streams from the run seed, ``i`` and the update reached.

Bad input, each a one-line message before the run folder is written: Ray missing, an
address where no Ray answers, more samplers than the cluster's free CPUs, samplers that
cannot all start within ``ray.start_timeout_s``. A sampler that dies mid-run stops the
run with a :class:`~blackout_training.ppo.sampler.SamplerLostError` after saving the last
finished update; ``--resume`` continues from it.
"""

from __future__ import annotations

import os
import socket
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from blackout_env import Rules

from ..agents.policy_net import ActorCritic, make_model
from .config import ConfigError, TrainConfig, config_from_dict, config_to_dict
from .sampler import Rollout, Sampler, SamplerLostError, make_env

__all__ = ["RayCluster", "RaySamplers", "SamplerActor", "sampler_seed"]



def sampler_seed(run_seed: int, index: int, update: int) -> int:
    """Seed of sampler ``index``'s network sampling: the run seed for sampler 0 of a fresh run (as the native
    trainer), else one drawn from (run seed, index, update)."""
    if index == 0 and update == 0:
        return run_seed
    return int(np.random.SeedSequence([run_seed, index, update]).generate_state(1)[0])


class SamplerActor:
    """One sampler in a Ray actor: its games, its opponents and a CPU copy of the learner's network."""

    def __init__(self, config_data: dict[str, Any], index: int, deal_seed: int,
                 league: Sequence[dict[str, torch.Tensor]], progress: float, update: int) -> None:
        from ..agents.policies import load_policy

        config = config_from_dict(config_data)
        rules = Rules.resolve(config.env.rules)
        torch.set_num_threads(config.ray.sampler_threads)
        torch.manual_seed(sampler_seed(config.run.seed, index, update))
        device = torch.device("cpu")

        def new_model() -> ActorCritic:
            return make_model(rules, config.model.hidden_sizes, config.model.arch, config.model.card_width,
                              config.env.observation, oracle=config.model.critic == "oracle")

        self.agent = new_model()  # (first: sampler 0 of a fresh run then samples as the native trainer)
        bots = [load_policy(spec, rules, config.run.seed + j) for j, spec in enumerate(config.opponents.bots)]
        reset_seed = deal_seed if index == 0 else int(np.random.SeedSequence([deal_seed, index]).generate_state(1)[0] >> 1)
        rng = np.random.default_rng([config.run.seed, index, update])
        self.sampler = Sampler(config, rules, make_env(config, rules), bots, new_model, rng, device, reset_seed,
                               league, progress)

    def where(self) -> dict[str, Any]:
        """The Ray node, host and process this sampler runs in."""
        import ray

        return {"node_id": ray.get_runtime_context().get_node_id(), "host": socket.gethostname(), "pid": os.getpid()}

    def collect(self, weights: dict[str, torch.Tensor], progress: float) -> Rollout:
        """One rollout with the learner's ``weights``, as arrays."""
        self.agent.load_state_dict(weights)
        return self.sampler.collect(self.agent, lambda: progress).arrays()

    def set_league(self, league: Sequence[dict[str, torch.Tensor]], progress: float) -> None:
        """The league's new snapshots (pool mode), seated from the next hand on."""
        self.sampler.set_league(league, progress)


class RayCluster:
    """The Ray this run joined (or started), checked to hold the samplers; :meth:`connect` first."""

    def __init__(self, ray: Any, owned: bool) -> None:
        self.ray, self.owned = ray, owned

    @classmethod
    def connect(cls, config: TrainConfig) -> RayCluster:
        """Join ``ray.address`` (or start Ray here) and check that ``ray.num_samplers`` samplers fit; a ConfigError
        names the problem (and Ray started here is stopped again)."""
        from .ray_cluster import connect_ray, free_cpus_for

        settings = config.ray
        owned = connect_ray(settings.address, settings.num_cpus, what="algo ppo_ray", needs_rllib=False)
        import ray

        cluster = cls(ray, owned)
        try:  # (an earlier run's samplers may still be leaving)
            free_cpus_for(settings.num_samplers * settings.sampler_cpus, settings.address, owned,
                          f"ray.num_samplers: {settings.num_samplers} samplers of {settings.sampler_cpus:g} CPU each",
                          "use fewer samplers, a smaller ray.sampler_cpus, or more CPUs (ray.num_cpus here)")
        except ConfigError:
            cluster.close()
            raise
        return cluster

    def start_samplers(self, config: TrainConfig, deal_seed: int, league: Sequence[dict[str, torch.Tensor]],
                       progress: float, update: int, device: torch.device,
                       log: Callable[[str], Any] = print) -> RaySamplers:
        """Start the samplers, spread over the nodes, and wait until every one runs (``ray.start_timeout_s``);
        ``device``: the learner's, where their rollouts are concatenated."""
        ray, settings = self.ray, config.ray
        remote = ray.remote(num_cpus=settings.sampler_cpus, scheduling_strategy="SPREAD", max_restarts=0)(SamplerActor)
        data = config_to_dict(config)
        league_ref = ray.put(list(league))
        actors = [remote.remote(data, index, deal_seed, league_ref, progress, update)
                  for index in range(settings.num_samplers)]
        places = [actor.where.remote() for actor in actors]
        ready, _ = ray.wait(places, num_returns=len(places), timeout=settings.start_timeout_s)
        if len(ready) < len(places):
            for actor in actors:
                ray.kill(actor)
            self.close()
            raise SamplerLostError(
                f"ray.num_samplers: only {len(ready)} of {settings.num_samplers} samplers started within "
                f"{settings.start_timeout_s:g} s (ray.start_timeout_s); the cluster may lack free CPUs "
                f"({settings.sampler_cpus:g} per sampler) or a node may be down"
            )
        try:
            nodes = ray.get(places)
        except ray.exceptions.RayError as error:  # a sampler that fails to build (a bad bot spec on a node, ...)
            for actor in actors:
                ray.kill(actor)
            self.close()
            raise SamplerLostError(f"a sampler failed to start: {error}") from None
        samplers = RaySamplers(ray, actors, nodes, device, self)
        log(samplers.describe())
        return samplers

    def close(self) -> None:
        """Stop Ray if this run started it."""
        if self.owned and self.ray.is_initialized():
            self.ray.shutdown()


class RaySamplers:
    """The samplers of a distributed run, as the trainer uses a local :class:`~blackout_training.ppo.sampler.Sampler`."""

    def __init__(self, ray: Any, actors: list[Any], nodes: list[dict[str, Any]], device: torch.device,
                 cluster: RayCluster) -> None:
        self.ray, self.actors, self.nodes, self.device, self.cluster = ray, actors, nodes, device, cluster
        self.last_timings: list[dict[str, Any]] = []

    def describe(self) -> str:
        """One line: how many samplers on how many nodes, and where each runs."""
        ids = list(dict.fromkeys(node["node_id"] for node in self.nodes))
        where = ", ".join(f"{i}: node {ids.index(node['node_id'])} ({node['host']}, pid {node['pid']})"
                          for i, node in enumerate(self.nodes))
        return f"ppo_ray: {len(self.actors)} samplers on {len(ids)} Ray node(s): {where}"

    def _gather(self, refs: list[Any], what: str) -> list[Any]:
        ray, results = self.ray, []
        for index, ref in enumerate(refs):
            try:
                results.append(ray.get(ref))
            except (ray.exceptions.RayActorError, ray.exceptions.ObjectLostError) as error:
                reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
                raise SamplerLostError(f"sampler {index} of {len(refs)} died during {what} ({reason})") from None
        return results

    def collect(self, agent: ActorCritic, progress: Callable[[], float]) -> Rollout:
        """One rollout of every sampler with ``agent``'s weights, concatenated in sampler order on the learner."""
        weights = self.ray.put({name: value.detach().cpu() for name, value in agent.state_dict().items()})
        fraction = progress()
        parts = self._gather([actor.collect.remote(weights, fraction) for actor in self.actors], "a rollout")
        self.last_timings = [{"node": node["node_id"], "host": node["host"], "pid": node["pid"],
                              "decisions": part.decisions, "seconds": part.seconds} for node, part in zip(self.nodes, parts)]
        with warnings.catch_warnings():  # (the object store's arrays are read-only; concat copies them)
            warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
            return Rollout.concat(parts, self.device)

    def set_league(self, league: Sequence[dict[str, torch.Tensor]], progress: float) -> None:
        """Send the league's snapshots to every sampler."""
        league_ref = self.ray.put(list(league))
        self._gather([actor.set_league.remote(league_ref, progress) for actor in self.actors], "a league update")

    def timings(self) -> list[dict[str, Any]]:
        """Each sampler's node, decisions and own seconds in the last rollout."""
        return [dict(timing) for timing in self.last_timings]

    def close(self) -> None:
        """Stop the samplers (and Ray, if the run started it)."""
        for actor in self.actors:
            try:
                self.ray.kill(actor)
            except Exception:  # noqa: BLE001 - an actor already dead is fine
                pass
        self.cluster.close()
