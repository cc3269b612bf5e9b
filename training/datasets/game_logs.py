"""A ``blackout eval --game-log`` file as a dataset: one seat's games, replayed through the Gym env.

Each logged game becomes one episode: the registered Gym env is reset with the game's decks and
first dealer, and every seat plays the logged actions (the other seats as the env's opponents),
so the observations, masks and rewards are the Gym env's own. The log is read and checked whole
before anything is written (:func:`blackout_training.evaluation.game_log.read_game_log`): a corrupt
log is refused naming its line.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from blackout_env.game.rules import Rules

from ..evaluation.game_log import GameLogError, LoggedGame, read_game_log
from .create import INFO_KEYS, _layout, env_spec, gym_episode, package_version
from .store import Episode, check_target, write_dataset

__all__ = ["dataset_from_log", "log_episodes"]


class _Replay:
    """The logged actions handed out in order: the learner's and, as opponents' moves, the others'."""

    def __init__(self, actions: list[int]) -> None:
        self.actions, self.cursor = actions, 0

    def __call__(self, view: Any = None) -> int:
        action = self.actions[self.cursor]
        self.cursor += 1
        return action


def _env_kwargs(game: LoggedGame, seat: int, observation: str) -> dict[str, Any]:
    others = [game.seats[(seat + k) % len(game.seats)] for k in range(1, len(game.seats))]
    return {
        "rules": game.rules.to_dict(), "opponents": others, "learner_seat": seat, "observation": observation,
        "episode": "hand" if game.hands else "match",
    }


def log_episodes(games: list[LoggedGame], seat: int, observation: str = "rules") -> Iterator[Episode]:
    """Seat ``seat``'s episode of every game, replayed through the Gym env."""
    from blackout_env.envs.gym_env import BlackoutGymEnv

    for game in games:
        replay = _Replay(game.actions)
        env = BlackoutGymEnv(**{**_env_kwargs(game, seat, observation), "opponents": replay, "illegal_action": "raise"})
        options: dict[str, Any] = {"decks": game.decks, "first_dealer": game.first_dealer}
        if game.hands:
            options["round"] = game.start_round
        yield gym_episode(env, replay, options=options)


def dataset_from_log(
    path: str | os.PathLike[str], dataset_id: str, seat: int = 0, policy: str | None = None,
    observation: str = "rules", overwrite: bool = False,
) -> tuple[int, int]:
    """Write the games of the game log at ``path`` as dataset ``dataset_id``: seat ``seat``'s episodes.

    ``policy`` keeps only the games where that policy name sits at ``seat`` (in a duplicate evaluation the
    rotations move every policy through the seats). Every game must share one rules set and episode kind
    (one env per dataset). Returns (episodes, decisions). Raises GameLogError (a ValueError) naming the line
    of a corrupt log, and ValueError for a seat the table does not have or a policy that never sits there.
    """
    check_target(dataset_id, overwrite)
    games = read_game_log(path)
    first = games[0]
    for game in games:
        if game.rules != first.rules or game.hands != first.hands:
            raise GameLogError(
                f"another table than line {first.line}'s (rules or single hands differ): a dataset holds one table",
                game.line,
            )
    n = first.rules.num_players
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < n:
        raise ValueError(f"seat must be a seat 0..{n - 1} of the logged table, got {seat!r}")
    if policy is not None:
        games = [game for game in games if game.seats[seat] == policy]
        if not games:
            raise ValueError(f"policy {policy!r} never sits in seat {seat} in {os.fspath(path)!r}")
    kwargs = _env_kwargs(games[0], seat, observation)
    rules: Rules = first.rules
    metadata = {
        "source": "game-log",
        "game_log": os.path.abspath(os.fspath(path)),
        "policy": policy if policy is not None else sorted({game.seats[seat] for game in games}),
        "seat_policies": [game.seats[seat] for game in games],
        "games": [{"deal": game.deal, "rotation": game.rotation, "line": game.line,
                   "opponents": _env_kwargs(game, seat, observation)["opponents"]} for game in games],
        "rules": rules.to_dict(),
        "rules_name": "from the game log",
        "learner_seat": seat,
        "package_version": package_version(),
        "observation": observation,
        "observation_layout": _layout(rules, observation),
        "info_keys": list(INFO_KEYS),
        "path": "gym",
        "terminal_observation": "env",
    }
    counted = [0, 0]

    def counting() -> Iterator[Episode]:
        for episode in log_episodes(games, seat, observation):
            counted[0] += 1
            counted[1] += len(episode)
            yield episode

    write_dataset(
        dataset_id, counting(), env_spec(kwargs), metadata,
        description=f"seat {seat} of the games in the game log {os.path.basename(os.fspath(path))}",
        algorithm_name="game log", overwrite=overwrite,
    )
    return counted[0], counted[1]
