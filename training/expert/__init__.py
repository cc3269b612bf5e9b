"""Expert iteration: distil ``ppo+search`` into a universal ``ppo`` network.

``ppo+search`` (IS-MCTS guided by the network, :mod:`blackout_training.agents.search_policy`)
plays far better than the network alone; distillation moves the network toward
the search's choices so that it keeps some of that strength at one forward pass
per decision. Two steps, each a function here and a ``blackout expert`` command:

1. :func:`generate` plays whole matches and, at each decision it searches that
   has more than one legal action, keeps the universal observation, the
   universal mask and the search's root visit counts (the search's choice is the
   most visited action). With ``decisions="bids"`` only the bids are searched
   and kept, and the network plays the cards (greedy): the states are those the
   network itself meets, and a match costs a fraction of a searched one. One
   compressed ``.npz`` shard per match in a folder, named by the run's seed and
   the match's index, so runs with different seeds add to the same folder and
   every shard can be played again alone.
2. :func:`distill` fine-tunes the network: cross-entropy toward the visit
   counts sharpened by a temperature (``visits ** (1 / T)``; a small T is the
   search's choice with its near-ties kept soft), while a KL term holds its
   policy on the other tables (the network's own states, sampled in self-play,
   every preset and the standard rules at 3, 5, 6 and 7 players) and a squared
   error holds its value everywhere. Held-out shards (every 20th) measure how
   often the network picks the search's choice before and after.

The result is a checkpoint like any universal one (``ppo:PATH``). The two steps are two
modules: :mod:`.shards` (playing and reading the data) and :mod:`.distill` (the fine-tuning).
"""

from .distill import distill, reference_tables
from .shards import DECISIONS, generate, load_shards

__all__ = ["DECISIONS", "distill", "generate", "load_shards", "reference_tables"]
