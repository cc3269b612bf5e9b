"""The compiled core: kernels over one struct-of-arrays state, its observation encoder, and the batched engine."""

from .engine import NONE, BatchedBlackout, BatchStep, action_array, bytes_per_game, game_tables

__all__ = ["NONE", "BatchStep", "BatchedBlackout", "action_array", "bytes_per_game", "game_tables"]
