"""What the play tells about where the hidden cards are: a probe for the search's inferred hidden cards.

The search draws its deals uniformly among those the view allows (``DealSampler``), or weighted by
the other seats' bids (``belief=bids``, which moved the log-loss of where the cards are by 1.0%).
This probe asks how much more a model that reads the whole view (the bids, every card played, who
led and followed with what) could know, before such a model is built into the search:

1. ``--hands`` hands of the standard table (each a random round of its schedule), every seat played
   by ``--policy``; at every card play, the acting seat's observation (the env's rules-sized vector)
   and where each card it cannot see really is: another seat's hand (by its offset from the acting
   seat) or out of play.
2. An MLP (observation -> per card, a logit per place, with ``--offset room`` added to the log of
   the room left in that place; places the view rules out masked) trained on the first 80% of
   the hands with cross-entropy over the unseen cards.
3. On the last 20%: the log-loss (nats per unseen card) of the true places under the MLP and under
   the uniform sampler (each view's chances estimated from ``--deals`` of its deals, with a
   pseudo-count, as ``blackout belief eval`` does), overall and by the tricks already played in the
   hand, and the MLP's calibration.

Usage: python docs/data/card_location_probe.py [--hands 3000] [--policy ppo] [--deals 200] [--epochs 8]
       [--offset none|room] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import math
import random
import time

import numpy as np
import torch
from blackout_baselines.deals import DealSampler
from blackout_training.agents.policies import load_policy
from blackout_training.evaluation.tournament import single_threaded_torch

from blackout_env import BlackoutGame, Rules
from blackout_env.game.encoding import encode

CARDS = 52


def play(rules: Rules, policy: str, hands: int, seed: int) -> list[list[tuple]]:
    """Per hand, its play decisions: (observation, acting seat's view, true place per card, tricks done)."""
    bot = load_policy(policy, rules, seed)
    n = rules.num_players
    pick = random.Random(seed)
    out = []
    with single_threaded_torch():
        for index in range(hands):
            game = BlackoutGame(rules, seed=seed * 1_000_003 + index, start_round=pick.randrange(rules.num_rounds))
            records = []
            start = game.round_index
            while game.round_index == start and not game.is_over:
                seat = game.current_player
                view = game.view(seat)
                if game.phase == "play":
                    place = np.full(CARDS, -1, dtype=np.int64)  # -1: seen by the acting seat
                    for card in view.unseen_cards:
                        if card >= CARDS:
                            continue
                        holder = next((s for s in range(n) if card in game.hands[s]), None)
                        place[card] = n - 1 if holder is None else (holder - seat) % n - 1
                    records.append((encode(view), view, place, sum(game.tricks_won)))
                game.step(int(bot.act(view)))
            out.append(records)
    return out


def eligible(view, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(CARDS, n)``: the places (other seats by offset, then out of play) the view allows each card, and
    the log of each place's room (cards it still holds, unseen), the model's starting point."""
    allowed = np.zeros((CARDS, n), dtype=bool)
    room = np.zeros(n)
    sampler = DealSampler(view)
    for place, seat in enumerate(sampler.seats):
        room[(seat - view.player) % n - 1] = sampler.capacity[place]
    room[n - 1] = sampler.capacity[-1]
    for card in sampler.pool_list:
        if card >= CARDS:
            continue
        for place, seat in enumerate(sampler.seats):
            offset = (seat - view.player) % n - 1
            allowed[card, offset] = sampler.eligible[place, card // 13] and sampler.capacity[place] > 0
        allowed[card, n - 1] = sampler.capacity[-1] > 0
    return allowed, np.log(np.maximum(room, 1e-9))


def uniform_chances(view, n: int, deals: int, np_rng, rng) -> np.ndarray:
    """``(CARDS, n)``: each card's chance of each place over the uniform sampler's deals (pseudo-count 0.5)."""
    sampler = DealSampler(view)
    drawn = np.array(sampler.draw(deals, np_rng, rng), dtype=np.uint64)
    chances = np.zeros((CARDS, n))
    total = len(sampler.pool_list)
    for card in sampler.pool_list:
        if card >= CARDS:
            continue
        held = (drawn[:, sampler.seats] & np.uint64(1 << card)) != 0
        counts = np.zeros(n)
        for place, seat in enumerate(sampler.seats):
            counts[(seat - view.player) % n - 1] = held[:, place].sum()
        counts[n - 1] = (~held.any(axis=1)).sum()
        prior = np.zeros(n)
        for place, seat in enumerate(sampler.seats):
            prior[(seat - view.player) % n - 1] = sampler.capacity[place] / total
        prior[n - 1] = sampler.capacity[-1] / total
        chances[card] = (counts + 0.5 * prior) / (len(drawn) + 0.5)
    return chances


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=3000)
    parser.add_argument("--policy", default="ppo")
    parser.add_argument("--deals", type=int, default=200)
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--offset", choices=("none", "room"), default="none",
                        help="room: the logits start from the log of the room left in each place")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    rules = Rules.preset("standard")
    n = rules.num_players
    began = time.perf_counter()
    hands = play(rules, args.policy, args.hands, args.seed)
    played_s = time.perf_counter() - began
    split = int(len(hands) * 0.8)
    train = [r for hand in hands[:split] for r in hand]
    test = [r for hand in hands[split:] for r in hand]

    def tensors(records):
        obs = torch.tensor(np.stack([r[0] for r in records]), dtype=torch.float32)
        place = torch.tensor(np.stack([r[2] for r in records]))
        both = [eligible(r[1], n) for r in records]
        allowed = torch.tensor(np.stack([a for a, _ in both]))
        room = torch.tensor(np.stack([r for _, r in both]), dtype=torch.float32)
        return obs, place, allowed, room

    obs, place, allowed, room = tensors(train)
    model = torch.nn.Sequential(
        torch.nn.Linear(obs.shape[1], 256), torch.nn.ReLU(), torch.nn.Linear(256, 256), torch.nn.ReLU(),
        torch.nn.Linear(256, CARDS * n),
    )
    if args.offset == "room":
        torch.nn.init.zeros_(model[-1].weight)  # (the start: the room's chances alone)
        torch.nn.init.zeros_(model[-1].bias)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    def loss_of(o, p, a, r):
        # a residual on the room left in each place (where every card is equally likely: the uniform
        # sampler's chances before the voids), so the model starts from it and learns what the play adds
        logits = model(o).view(-1, CARDS, n)
        if args.offset == "room":
            logits = logits + r[:, None, :]
        logits = logits.masked_fill(~a, -1e9)
        log_p = torch.log_softmax(logits, dim=2)
        known = p >= 0
        picked = log_p.gather(2, p.clamp(min=0).unsqueeze(2)).squeeze(2)
        return -(picked * known).sum() / known.sum(), log_p

    for _ in range(args.epochs):
        order = torch.randperm(len(obs))
        for batch in order.split(512):
            loss, _ = loss_of(obs[batch], place[batch], allowed[batch], room[batch])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

    t_obs, t_place, t_allowed, t_room = tensors(test)
    with torch.no_grad():
        _, log_p = loss_of(t_obs, t_place, t_allowed, t_room)
    chances = log_p.exp().numpy()
    np_rng, rng = np.random.default_rng(args.seed + 1), random.Random(args.seed + 1)
    bins = 10
    predicted, observed, counts = np.zeros(bins), np.zeros(bins), np.zeros(bins, dtype=np.int64)
    by_trick: dict[int, list[float]] = {}
    total_model = total_uniform = 0.0
    scored = 0
    for k, record in enumerate(test):
        uniform = uniform_chances(record[1], n, args.deals, np_rng, rng)
        truth = record[2]
        stage = by_trick.setdefault(min(record[3], 3), [0.0, 0.0, 0])
        for card in np.flatnonzero(truth >= 0):
            where = int(truth[card])
            model_loss = -math.log(max(chances[k, card, where], 1e-12))
            uniform_loss = -math.log(uniform[card, where])
            total_model += model_loss
            total_uniform += uniform_loss
            stage[0] += model_loss
            stage[1] += uniform_loss
            stage[2] += 1
            scored += 1
            for p in np.flatnonzero(t_allowed[k, card].numpy()):
                b = min(int(chances[k, card, p] * bins), bins - 1)
                predicted[b] += chances[k, card, p]
                observed[b] += p == where
                counts[b] += 1
    figures = {
        "policy": args.policy, "hands": args.hands, "train_views": len(train), "test_views": len(test),
        "unseen_cards_scored": scored, "deals": args.deals, "epochs": args.epochs, "seed": args.seed,
        "offset": args.offset,
        "play_seconds": played_s,
        "log_loss_uniform": total_uniform / scored, "log_loss_model": total_model / scored,
        "by_tricks_played": {
            ("3+" if t == 3 else str(t)): {"uniform": v[1] / v[2], "model": v[0] / v[2], "cards": v[2]}
            for t, v in sorted(by_trick.items())
        },
        "calibration": [
            {"low": b / bins, "high": (b + 1) / bins, "pairs": int(counts[b]),
             "predicted": float(predicted[b] / counts[b]) if counts[b] else 0.0,
             "observed": float(observed[b] / counts[b]) if counts[b] else 0.0}
            for b in range(bins)
        ],
    }
    print(json.dumps(figures, indent=1))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as file:
            json.dump(figures, file, indent=1)
            file.write("\n")


if __name__ == "__main__":
    main()
