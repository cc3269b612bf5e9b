"""Play one seat's matches and keep them as a Minari dataset: through the Gym env, or batched.

Both paths play the same episodes from the same seed. Episode ``i`` of a dataset with seed
``s`` is the registered Gym env (``blackout_env:blackout/Blackout-v0`` with the dataset's
options) reset with seed :func:`episode_seed` ``(s, i)``, the learner seat played by the
dataset's policy and the other seats by its opponents.

- ``path="gym"`` steps that env one decision at a time (any policy; ``ppo+search`` and other
  searches come this way, in ``workers`` processes).
- ``path="batched"`` plays a wave of ``batch`` episodes at once on the vector env
  (:class:`blackout_env.envs.vector_env.BlackoutVectorEnv`), each game dealt the decks the Gym env
  deals for that episode's seed (:func:`episode_decks`); the policy decides for every game at
  once (the heuristic's batched form, a network's ``act_batch``); with ``workers`` N > 1, N - 1
  processes play the waves while this one writes. For a deterministic policy
  and deterministic opponents it writes what the Gym path writes, but for the terminal
  observation (see :data:`TERMINAL_OBSERVATION`).
"""

from __future__ import annotations

import collections
import concurrent.futures
import contextlib
import dataclasses
import hashlib
import importlib.metadata
import itertools
import multiprocessing
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from blackout_env.agents.policies import absolute_paths
from blackout_env.agents.seating import Seat
from blackout_env.game.engine import BlackoutGame, IllegalActionError
from blackout_env.game.rules import Rules
from blackout_env.game.universal import observation_kind

from ..evaluation.tournament import single_threaded_torch
from .store import Episode, check_target, write_dataset

__all__ = [
    "ENV_ID",
    "INFO_KEYS",
    "PATHS",
    "TERMINAL_OBSERVATION",
    "DatasetConfig",
    "DatasetResult",
    "create_dataset",
    "episode_decks",
    "episode_seed",
    "play_episodes",
]

ENV_ID = "blackout/Blackout-v0"
"""The registered Gymnasium id every dataset names as its environment."""
PATHS = ("gym", "batched")
INFO_KEYS = ("action_mask",)
"""The infos kept at every step: the learner's legal actions (int8; all ones after the last step, the Gym
env's terminal convention). The rest of the Gym env's info (seat, round, score...) is in the observation
or the metadata, and each key more is one more HDF5 dataset per episode, Minari's main writing cost."""
TERMINAL_OBSERVATION = {"gym": "env", "batched": "zeros"}
"""What each path stores as an episode's last observation (after its last action): the Gym env's
terminal observation, or zeros (the vector env resets a finished game within the step, and that
observation is gone). No decision is taken there: ``terminations`` is true at the last step."""


def episode_seed(seed: int, index: int) -> int:
    """The Gym env's reset seed of episode ``index`` in a dataset of seed ``seed``."""
    return int(np.random.SeedSequence([seed, index]).generate_state(1)[0])


def _derived_seed(seed: int, *keys: int) -> int:
    """A seed drawn from the dataset's seed for one purpose (keys: an episode or wave, then what for)."""
    return int(np.random.SeedSequence([seed, *keys]).generate_state(1)[0])


def episode_decks(rules: Rules, seed: int) -> tuple[int, list[list[int]]]:
    """The first dealer and every round's deck order that the Gym env deals after ``reset(seed=seed)``.

    The Gym env draws the AEC env's seed from its own generator, and the AEC env draws the
    engine's; the engine shuffles the decks (``BlackoutGame(rules, seed=...)``). A fixed learner
    seat draws nothing before (tests/test_datasets.py holds this to the Gym env's own games).
    """
    from gymnasium.utils import seeding

    env_rng, _ = seeding.np_random(seed)
    aec_rng, _ = seeding.np_random(int(env_rng.integers(2**31)))
    game = BlackoutGame(rules, seed=int(aec_rng.integers(2**63)))
    return game.first_dealer, game.decks


@dataclass
class DatasetConfig:
    """What a dataset holds: who plays, at which table, how many episodes, from which seed."""

    policy: str
    """The learner's policy spec (``heuristic``, ``ppo``, ``ppo+search``, ``ppo:PATH``...)."""
    opponents: list[str] = dataclasses.field(default_factory=lambda: ["heuristic"])
    """One spec for every other seat, or one per other seat clockwise from the learner."""
    rules: str = "standard"
    """A preset name or a YAML file."""
    players: int | None = None
    """Overrides the rules' number of players."""
    episodes: int | None = None
    """Episodes to play (one seat's match each); or give ``decisions``."""
    decisions: int | None = None
    """Play whole episodes until at least this many learner decisions are kept."""
    seed: int = 0
    seat: int = 0
    """The learner's seat."""
    observation: str = "rules"
    """``rules`` (the rules-sized vector) or ``universal``."""
    path: str = "gym"
    """``gym`` (the registered env, one decision at a time) or ``batched`` (the vector env)."""
    batch: int = 1024
    """Episodes played at once by the batched path."""
    workers: int = 1
    """Processes: the Gym path plays in this many; the batched path, when more than one, plays in ``workers - 1``
    while the calling process writes."""

    def resolved_rules(self) -> Rules:
        """The table's rules (the preset or file, with ``players`` applied)."""
        rules = Rules.resolve(self.rules)
        if self.players is not None:
            if isinstance(self.players, bool) or not isinstance(self.players, int) or not 3 <= self.players <= 7:
                raise ValueError(f"players must be 3..7, got {self.players!r}")
            rules = rules.replace(num_players=self.players)
        return rules

    def check(self) -> Rules:
        """Refuse a bad value (ValueError naming it) and return the rules; loads no policy."""
        rules = self.resolved_rules()
        if (self.episodes is None) == (self.decisions is None):
            raise ValueError("give the number of episodes or of decisions (one of them)")
        for name in ("episodes", "decisions", "batch", "workers"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValueError(f"{name} must be a whole number >= 1, got {value!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be a whole number >= 0, got {self.seed!r}")
        if isinstance(self.seat, bool) or not isinstance(self.seat, int) or not 0 <= self.seat < rules.num_players:
            raise ValueError(f"seat must be a seat 0..{rules.num_players - 1}, got {self.seat!r}")
        if self.path not in PATHS:
            raise ValueError(f"path must be one of {', '.join(PATHS)}, got {self.path!r}")
        observation_kind(self.observation)
        if len(self.opponents) not in (1, rules.num_players - 1):
            raise ValueError(
                f"opponents: one spec for every other seat, or {rules.num_players - 1} (one per other seat); "
                f"got {len(self.opponents)}"
            )
        if self.path == "batched":
            if rules.first_dealer == "random":
                raise ValueError("the batched path deals with a fixed first dealer; these rules draw it (use path gym)")
        return rules

    def opponent_specs(self, rules: Rules) -> list[str]:
        """One spec per other seat, clockwise from the learner."""
        return list(self.opponents) * (rules.num_players - 1) if len(self.opponents) == 1 else list(self.opponents)

    def env_kwargs(self, rules: Rules) -> dict[str, Any]:
        """The Gym env's keyword arguments, as JSON data (they go into the dataset's env spec)."""
        return {
            "rules": rules.to_dict(), "opponents": self.opponent_specs(rules), "learner_seat": self.seat,
            "observation": self.observation,
        }


@dataclass(frozen=True)
class DatasetResult:
    """What :func:`create_dataset` wrote."""

    dataset_id: str
    path: Path
    episodes: int
    decisions: int
    seconds: float
    metadata: dict[str, Any]

    @property
    def decisions_per_second(self) -> float:
        """Learner decisions kept per second of generating and writing."""
        return self.decisions / self.seconds if self.seconds > 0 else float("inf")


def env_spec(kwargs: dict[str, Any]) -> Any:
    """The registered Gym env's spec with these keyword arguments (what ``recover_environment`` makes)."""
    import gymnasium as gym

    import blackout_env  # noqa: F401 - registers the ids

    spec = gym.spec(ENV_ID)
    return dataclasses.replace(spec, kwargs={**spec.kwargs, **kwargs})


def _seat(spec: str, rules: Rules, observation: str, batched: bool, role: str) -> Seat:
    """A policy seated at the table; a spec that names no policy, or cannot play these rules, is refused."""
    try:
        return Seat(spec, rules, observation, batched=batched)
    except ValueError as error:
        message = str(error).removeprefix("opponents: ")
        raise ValueError(f"{role} {spec!r}: {message}") from None


def checkpoint_hashes(seats: Sequence[Seat]) -> dict[str, str]:
    """``{spec: sha256 of its checkpoint file}`` for every seated policy that was loaded from one."""
    hashes = {}
    for seat in seats:
        path = getattr(seat.policy, "checkpoint", None)
        if path is not None:
            hashes[seat.name] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    return hashes


def _layout(rules: Rules, observation: str) -> list[list[Any]]:
    from blackout_env.game.encoding import observation_layout
    from blackout_env.game.universal import universal_layout

    blocks = universal_layout() if observation == "universal" else observation_layout(rules)
    return [[block.name, block.offset, block.size] for block in blocks]


def package_version() -> str:
    """The installed blackout-rl version."""
    try:
        return importlib.metadata.version("blackout-rl")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - run from a source tree
        import blackout_env

        return blackout_env.__version__


# ------------------------------------------------------------------ the Gym path
def info_arrays(infos: Sequence[Mapping[str, Any]]) -> dict[str, np.ndarray]:
    """The kept infos (:data:`INFO_KEYS`) of an episode's steps, one array per key (the mask as int8)."""
    return {key: np.asarray([info[key] for info in infos], dtype=np.int8 if key == "action_mask" else np.int64)
            for key in INFO_KEYS}


def gym_episode(env: Any, choose: Callable[[], int], seed: int | None = None,
                options: dict[str, Any] | None = None) -> Episode:
    """One episode of a single-agent Gym env: ``reset(seed, options)``, then ``choose()`` the learner's
    action at each of its decisions until the episode ends (the Gym path and the game-log replay)."""
    observation, info = env.reset(seed=seed, options=options)
    observations, infos, actions, rewards = [observation], [info], [], []
    terminated = truncated = False
    while not (terminated or truncated):
        action = choose()
        observation, reward, terminated, truncated, info = env.step(action)
        observations.append(observation)
        infos.append(info)
        actions.append(action)
        rewards.append(reward)
    return Episode(seed, np.asarray(observations, dtype=np.float32), np.asarray(actions, dtype=np.int64),
                   np.asarray(rewards, dtype=np.float32), info_arrays(infos))


def _gym_episodes(config: DatasetConfig, rules: Rules, indices: Sequence[int]) -> Iterator[Episode]:
    """Episodes ``indices`` through the registered Gym env, one decision at a time.

    Torch runs on one thread meanwhile: one decision's small products gain nothing from its pool, whose
    threads spin at every product's barrier (``--workers 2`` on two cores wrote ppo+search's games 3x slower).
    """
    import gymnasium as gym

    env = gym.make(env_spec(config.env_kwargs(rules)))
    aec = env.unwrapped.aec_env
    agent = aec.possible_agents[config.seat]
    learner = _seat(config.policy, rules, config.observation, False, "policy")
    with single_threaded_torch():
        for index in indices:

            def choose(index: int = index) -> int:
                view = aec.view(agent)
                action = int(learner.act(view))
                if action not in view.legal_actions:
                    raise IllegalActionError(
                        f"policy {config.policy!r} chose {action} in episode {index}, which is not legal; "
                        f"legal: {list(view.legal_actions)}"
                    )
                return action

            learner.seed(_derived_seed(config.seed, index, 1))
            yield gym_episode(env, choose, seed=episode_seed(config.seed, index))
    env.close()


def _gym_worker(job: tuple[DatasetConfig, list[int]]) -> list[Episode]:
    config, indices = job
    return list(_gym_episodes(config, config.check(), indices))


def _gym_episodes_parallel(config: DatasetConfig, rules: Rules, count: int) -> Iterator[Episode]:
    """Episodes ``0..count-1`` in ``config.workers`` processes, in order (each episode depends on its seed only)."""
    if config.workers == 1:
        yield from _gym_episodes(config, rules, range(count))
        return
    step = max(1, min(64, count // (4 * config.workers) or 1))
    jobs = [(config, list(range(start, min(count, start + step)))) for start in range(0, count, step)]
    with multiprocessing.get_context("spawn").Pool(config.workers) as pool:
        for episodes in pool.imap(_gym_worker, jobs):
            yield from episodes


# ------------------------------------------------------------------ the batched path
def _waves(config: DatasetConfig, count: int) -> list[tuple[int, int, int]]:
    """``(start, size, wave)`` of each wave of ``config.batch`` episodes."""
    return [(start, min(config.batch, count - start), wave) for wave, start in enumerate(range(0, count, config.batch))]


class _WavePlayer:
    """Plays waves on the vector env: one env per wave size, made at once (so that every policy, the
    opponents' networks included, is loaded before torch's threads are set), kept: every wave reseeds it."""

    def __init__(self, config: DatasetConfig, rules: Rules, sizes: Iterable[int]) -> None:
        from blackout_env.envs.vector_env import BlackoutVectorEnv

        self.config, self.rules = config, rules
        self.learner = _seat(config.policy, rules, config.observation, True, "policy")
        self.envs = {
            size: BlackoutVectorEnv(
                size, rules, opponents=config.opponent_specs(rules), learner_seat=config.seat,
                observation=config.observation,
                copy=False,  # (each step's observation is copied once, into the wave's arrays)
            )
            for size in sorted(set(sizes))
        }

    def play(self, start: int, size: int, wave: int,
             allocate: Callable[[tuple[int, ...]], np.ndarray] | None = None) -> _WaveArrays:
        return _wave(self.envs[size], self.learner, self.config, self.rules, start, size, wave, allocate)


def _batched_episodes(config: DatasetConfig, rules: Rules, count: int) -> Iterator[Episode]:
    """Episodes ``0..count-1`` in waves of ``config.batch`` games on the vector env.

    A network decides with torch on one thread. With ``config.workers`` N > 1, N - 1 processes play the
    waves (one wave each at a time, one more queued) while this process writes the finished ones; the
    episodes are the same, in the same order (each wave reseeds the env and every seat). Closing the
    generator (an error in the writer, Ctrl-C) stops the workers and removes their files.
    """
    waves = _waves(config, count)
    sizes = {size for _, size, _ in waves}
    if config.workers == 1:
        player = _WavePlayer(config, rules, sizes)
        # (one thread, as in a worker: the default pool wrote ppo datasets 3x slower beside one busy process)
        with single_threaded_torch():
            for job in waves:
                yield from player.play(*job).episodes()
        return
    players = min(config.workers - 1, len(waves))
    context = multiprocessing.get_context("spawn")
    with tempfile.TemporaryDirectory(prefix="blackout-waves-", ignore_cleanup_errors=True) as folder:
        # (a worker that dies, killed or out of memory, breaks the pool: its waves raise BrokenProcessPool)
        pool = concurrent.futures.ProcessPoolExecutor(players, mp_context=context)
        try:
            pending: collections.deque = collections.deque()
            jobs = iter(waves)
            for job in itertools.islice(jobs, players + 1):  # each player busy, one wave queued behind
                pending.append(pool.submit(_wave_worker, config, sizes, *job, folder))
            while pending:
                try:
                    arrays = pending.popleft().result()
                except concurrent.futures.process.BrokenProcessPool:
                    raise RuntimeError(
                        "a worker of the batched path stopped abruptly (killed, or out of memory, or of space for its "
                        f"wave files in {folder}); nothing was written"
                    ) from None
                job = next(jobs, None)
                if job is not None:
                    pending.append(pool.submit(_wave_worker, config, sizes, *job, folder))
                arrays.observations = _mapped(arrays.observations)
                yield from arrays.episodes()
                del arrays
        except BaseException:  # an error, Ctrl-C, SIGTERM, the generator closed: stop the workers now
            _stop(pool)
            raise
        pool.shutdown()


def _stop(pool: concurrent.futures.ProcessPoolExecutor) -> None:
    """Stop a pool's workers at once (a wave being played, or numba compiling its kernels, may take a while)."""
    terminate = getattr(pool, "terminate_workers", None)  # Python 3.14
    if terminate is not None:
        terminate()
        return
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        process.terminate()
    pool.shutdown(wait=False, cancel_futures=True)


def _mapped(path: str) -> np.ndarray:
    """A worker's wave observations from their file, which is removed at once (mapped where the system
    lets a mapped file go, POSIX; read whole elsewhere)."""
    if os.name == "posix":
        observations = np.load(path, mmap_mode="r")
    else:
        observations = np.load(path)
    with contextlib.suppress(OSError):  # (left to the folder's cleanup otherwise)
        os.unlink(path)
    return observations


_PLAYER: dict[str, _WavePlayer] = {}


def _wave_worker(config: DatasetConfig, sizes: set[int], start: int, size: int, wave: int, folder: str) -> _WaveArrays:
    """A wave played in a worker process (its player made at the first wave; an error reaches the caller).

    The observations, the wave's bulk, are written to a file in ``folder`` as they are played and go
    back by name: through the pool's pipe they cost about as long as playing the wave. Torch, if a
    policy loaded it, runs on one thread: the writer needs the other core.
    """
    if "player" not in _PLAYER:
        _PLAYER["player"] = _WavePlayer(config, config.check(), sizes)
        torch = sys.modules.get("torch")
        if torch is not None:
            torch.set_num_threads(1)
    path = os.path.join(folder, f"wave-{wave}.npy")
    arrays = _PLAYER["player"].play(
        start, size, wave,
        lambda shape: np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=shape),
    )
    arrays.observations.flush()
    arrays.observations = path
    return arrays


@dataclass
class _WaveArrays:
    """A wave's steps, laid out game by game (game, step, ...), and each game's length in learner decisions."""

    seeds: list[int]
    observations: Any
    """An array; from a worker, the path of its ``.npy`` file until mapped."""
    actions: np.ndarray
    rewards: np.ndarray
    infos: dict[str, np.ndarray]
    length: np.ndarray

    def episodes(self) -> list[Episode]:
        """Each game's episode: views of the wave's arrays, whole and in order, as Minari writes them."""
        return [
            Episode(seed, self.observations[g, : n + 1], self.actions[g, :n], self.rewards[g, :n],
                    {key: value[g, : n + 1] for key, value in self.infos.items()})
            for g, (seed, n) in enumerate(zip(self.seeds, self.length.tolist()))
        ]


def _wave(env: Any, learner: Seat, config: DatasetConfig, rules: Rules, start: int, size: int, wave: int,
          allocate: Callable[[tuple[int, ...]], np.ndarray] | None = None) -> _WaveArrays:
    """One wave: ``size`` episodes from ``start`` on, each game dealt its episode's decks, played to the end.

    Every step is copied once, into arrays laid out episode by episode (game, step, ...); the
    observations into ``allocate(shape)`` (float32) when given.
    """
    seeds = [episode_seed(config.seed, start + k) for k in range(size)]
    decks = np.asarray([episode_decks(rules, seed)[1] for seed in seeds], dtype=np.int64)
    learner.seed(_derived_seed(config.seed, wave, 2))
    rng = np.random.default_rng(_derived_seed(config.seed, wave, 3))  # a "random" learner's draws
    observation, info = env.reset(seed=_derived_seed(config.seed, wave, 4), options={"decks": decks})
    games = np.arange(size)
    seats = np.full(size, config.seat, dtype=np.int64)
    steps = decisions_per_episode(rules)
    shape = (size, steps + 1, observation.shape[1])
    observations = np.empty(shape, dtype=np.float32) if allocate is None else allocate(shape)
    actions = np.empty((size, steps), dtype=np.int64)
    rewards = np.empty((size, steps), dtype=np.float32)
    first = info_arrays([info])
    infos = {key: np.empty((size, steps + 1, *value.shape[2:]), dtype=value.dtype) for key, value in first.items()}
    observations[:, 0] = observation
    for key, value in first.items():
        infos[key][:, 0] = value[0]
    ended = np.zeros(size, dtype=bool)
    length = np.zeros(size, dtype=np.int64)
    for step in range(1, steps + 1):
        mask = info["action_mask"]
        chosen = learner.act_games(env.engine, games, seats, lambda o=observation, m=mask: (o, m), rng)
        observation, reward, terminated, _, info = env.step(chosen)
        actions[:, step - 1] = chosen
        rewards[:, step - 1] = reward
        observations[:, step] = observation
        for key, value in info_arrays([info]).items():
            infos[key][:, step] = value[0]
        if terminated.any():
            # The game has been reset within the step: the Gym env's observation after the last action is
            # gone (zeros stand for it); its mask is the terminal all-ones.
            done = np.flatnonzero(terminated)
            observations[done, step] = 0.0
            infos["action_mask"][done, step] = 1
        length[~ended] += 1
        ended |= terminated
        if ended.all():
            break
    if not ended.all():
        raise RuntimeError(f"a game of the wave from episode {start} outlasted a match ({steps} learner decisions)")
    return _WaveArrays(seeds, observations, actions, rewards, infos, length)


# ------------------------------------------------------------------ both
def play_episodes(config: DatasetConfig) -> Iterator[Episode]:
    """The dataset's episodes, in order, by ``config.path`` (see the module docstring)."""
    rules = config.check()
    count = episode_count(config, rules)
    yield from (_batched_episodes if config.path == "batched" else _gym_episodes_parallel)(config, rules, count)


def episode_count(config: DatasetConfig, rules: Rules) -> int:
    """``config.episodes``, or the episodes that hold at least ``config.decisions`` learner decisions."""
    if config.episodes is not None:
        return config.episodes
    return -(-config.decisions // decisions_per_episode(rules))


def decisions_per_episode(rules: Rules) -> int:
    """A seat's decisions in a match: one bid and one card per trick in every hand (a fixed number)."""
    return sum(1 + hand_size for hand_size in rules.hand_sizes)


def dataset_metadata_for(config: DatasetConfig, rules: Rules, seats: Sequence[Seat]) -> dict[str, Any]:
    """The ``"blackout"`` metadata of a dataset made from ``config``."""
    return {
        "source": "create",
        "policy": config.policy,
        "opponents": config.opponent_specs(rules),
        "checkpoints": checkpoint_hashes(seats),
        "rules_name": config.rules if config.players is None else f"{config.rules} ({config.players} players)",
        "rules": rules.to_dict(),
        "seed": config.seed,
        "learner_seat": config.seat,
        "episode_seeds": "numpy SeedSequence([seed, index]).generate_state(1)[0]",
        "package_version": package_version(),
        "observation": config.observation,
        "observation_layout": _layout(rules, config.observation),
        "info_keys": list(INFO_KEYS),
        "path": config.path,
        "batch": config.batch if config.path == "batched" else None,
        "terminal_observation": TERMINAL_OBSERVATION[config.path],
    }


def _absolute(spec: Any) -> Any:
    return absolute_paths(spec) if isinstance(spec, str) else spec


def create_dataset(
    dataset_id: str, config: DatasetConfig, overwrite: bool = False, log: Callable[[str], None] | None = None,
) -> DatasetResult:
    """Play ``config``'s episodes and write them as Minari dataset ``dataset_id`` (see the module docstring).

    Everything that can be refused is refused before the first episode (a bad option, an unknown spec,
    rules a policy cannot play, a name that exists without ``overwrite``, a root that cannot be written),
    and the dataset appears only once complete.
    """
    rules = config.check()
    # the files a spec names, absolute: the env spec (recover_environment) and the metadata load them from any folder
    config = dataclasses.replace(config, policy=_absolute(config.policy), opponents=[_absolute(s) for s in config.opponents])
    check_target(dataset_id, overwrite)
    seats = [_seat(config.policy, rules, config.observation, config.path == "batched", "policy")]
    seats += [_seat(spec, rules, config.observation, config.path == "batched", "opponent")
              for spec in dict.fromkeys(config.opponent_specs(rules))]
    metadata = dataset_metadata_for(config, rules, seats)
    counted = {"episodes": 0, "decisions": 0}

    def counting() -> Iterator[Episode]:
        with contextlib.closing(play_episodes(config)) as episodes:  # (closed on an error: workers stop)
            for episode in episodes:
                counted["episodes"] += 1
                counted["decisions"] += len(episode)
                if log is not None and counted["episodes"] % 1000 == 0:
                    log(f"{counted['episodes']:,} episodes, {counted['decisions']:,} decisions")
                yield episode

    start = time.perf_counter()
    with contextlib.closing(counting()) as episodes:
        path = write_dataset(
            dataset_id, episodes, env_spec(config.env_kwargs(rules)), metadata,
            description=f"{config.policy} in seat {config.seat} against {', '.join(config.opponent_specs(rules))}, "
                        f"rules {metadata['rules_name']}, seed {config.seed} (blackout dataset create)",
            algorithm_name=config.policy, overwrite=overwrite,
        )
    seconds = time.perf_counter() - start
    return DatasetResult(dataset_id, path, counted["episodes"], counted["decisions"], seconds, metadata)
