"""Seconds per decision of the slowest bots a browser may seat, on the longest hands it may choose.

The first three bids and the first card of the 17-card hand of `full-deck` at 3 players, deal seed 0,
for each spec (docs/web.md, Security and limits):

    python docs/data/web_bot_time.py
"""

import time

from blackout_env import BlackoutGame, Rules
from blackout_env.agents.policies import load_policy

SPECS = ["search", "search:samples=64", "ppo+rollout:phases=all",
         "ppo+rollout:phases=all,samples=64,card_samples=64"]

rules = Rules.resolve("full-deck").replace(num_players=3)
longest = list(rules.hand_sizes).index(max(rules.hand_sizes))
for spec in SPECS:
    bot = load_policy(spec, rules, 0)
    game = BlackoutGame(rules, seed=0, start_round=longest)
    times = []
    for _ in range(4):  # three bids, then the first card
        started = time.perf_counter()
        action = bot.act(game.view(game.current_player))
        times.append(f"{game.phase} {time.perf_counter() - started:.2f} s")
        game.step(action)
    print(f"{spec}: {', '.join(times)}")
