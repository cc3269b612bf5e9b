"""Blackout RL: the trick-taking game Blackout (Oh Hell) as a reinforcement-learning environment."""

from .envs.aec import env, raw_env
from .envs.gym_env import BlackoutGymEnv
from .envs.registration import register_envs
from .game.cards import card_to_str, parse_card
from .game.encoding import action_mask, encode, observation_layout, observation_size
from .game.engine import BlackoutGame, IllegalActionError, SaveFileError, action_to_str, deck_order
from .game.rules import Rules, RulesError, preset_names
from .game.view import PlayerView

__version__ = "0.1.0"

__all__ = [
    "BlackoutGame", "BlackoutGymEnv", "IllegalActionError", "PlayerView", "Rules", "RulesError", "SaveFileError",
    "action_mask", "action_to_str", "card_to_str", "deck_order", "encode", "env", "observation_layout",
    "observation_size", "parse_card", "preset_names", "raw_env",
]

# pettingzoo.make("aec", "blackout/Blackout-v0") and gym.make("blackout/Blackout-v0") after this import.
register_envs()
