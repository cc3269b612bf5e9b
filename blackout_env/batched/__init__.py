"""The compiled core: kernels over one struct-of-arrays state, its observation encoder, and the batched engine."""

from .engine import (
    EPISODES,
    NONE,
    REWARDS,
    BatchedBlackout,
    BatchStep,
    action_array,
    bytes_per_game,
    game_tables,
    numba_available,
)

__all__ = [
    "EPISODES", "NONE", "REWARDS", "BatchStep", "BatchedBlackout", "action_array", "bytes_per_game", "game_tables",
    "numba_available",
]
