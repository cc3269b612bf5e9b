"""Blackout RL: the trick-taking game Blackout (Oh Hell) as a reinforcement-learning environment."""

from .cards import card_to_str, parse_card
from .engine import BlackoutGame, IllegalActionError, SaveFileError, action_to_str, deck_order
from .rules import Rules, RulesError, preset_names
from .view import PlayerView

__version__ = "0.1.0"

__all__ = [
    "BlackoutGame",
    "IllegalActionError",
    "PlayerView",
    "Rules",
    "RulesError",
    "SaveFileError",
    "action_to_str",
    "card_to_str",
    "deck_order",
    "parse_card",
    "preset_names",
]
