"""``blackout belief``: fit the bid model of the search's inferred hidden cards, and measure it.

- ``blackout belief fit --out FILE``: a policy (``--policy``, the shipped ``ppo`` by default)
  makes every bid of ``--hands`` fresh hands over the ``--rules`` tables (every preset by
  default); the bids are counted into a :class:`~blackout_baselines.belief.BidModel`.
- ``blackout belief eval``: on held-out hands bid by the same policy, from each seat's view
  once every bid is in (before the first card), the chance of each unseen card being in
  each other seat's hand (or out of play) under the model (``--deals`` deals of the uniform
  sampler, weighted by the chance of the bids) and under the uniform sampler (exactly, and
  estimated from the same deals unweighted, to show the estimate's own noise); the log-loss of where the cards really are under each, and the
  calibration of the model's chances (predicted against observed, in ten bins).
"""

from __future__ import annotations

import argparse
import math
import random

import numpy as np
from blackout_baselines.belief import DEFAULT_BID_MODEL, BidBelief, BidModel, bid_records
from blackout_baselines.deals import DealSampler

from blackout_env import BlackoutGame, Rules, preset_names

from ..bench import check_output_file, check_positive, write_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True
    fit = sub.add_parser("fit", help="count a policy's bids into a bid model file")
    evaluate = sub.add_parser("eval", help="log-loss and calibration of a bid model's card locations on held-out hands")
    for command in (fit, evaluate):
        command.add_argument("--policy", default="ppo", metavar="SPEC", help="the policy making every bid (default ppo)")
        command.add_argument("--rules", nargs="+", default=None, metavar="RULES",
                             help="presets or YAML files, hands shared among them (default: every preset)")
        command.add_argument("--seed", type=int, default=0, help="seed of the hands (default 0; eval: 1)")
    fit.add_argument("--hands", type=int, default=20000, help="hands in all (default 20000)")
    fit.add_argument("--out", required=True, help="the bid model file to write (.json)")
    evaluate.add_argument("--model", default=str(DEFAULT_BID_MODEL), help="bid model file (default: the shipped one)")
    evaluate.add_argument("--hands", type=int, default=500, help="held-out hands in all (default 500)")
    evaluate.add_argument("--deals", type=int, default=2000, help="weighted deals per view (default 2000)")
    evaluate.add_argument("--json", default=None, help="also write the figures to this JSON file")
    evaluate.set_defaults(seed=1)


def _tables(names: list[str] | None) -> list[tuple[str, Rules]]:
    names = names or preset_names()
    return [(name, Rules.resolve(name)) for name in names]


def _bot(spec: str, rules: Rules, seed: int):
    from ..agents.policies import load_policy

    return load_policy(spec, rules, seed)


def _share(total: int, parts: int, index: int) -> int:
    return total // parts + (index < total % parts)


def run(args: argparse.Namespace) -> int:
    check_positive(hands=args.hands)
    tables = _tables(args.rules)
    if args.action == "fit":
        if not args.out.endswith(".json"):
            raise ValueError(f"--out {args.out!r}: a bid model file ends in .json")
        check_output_file(args.out)
        records = []
        for index, (_, rules) in enumerate(tables):
            hands = _share(args.hands, len(tables), index)
            if hands:
                records += bid_records(_bot(args.policy, rules, args.seed), rules, hands, seed=args.seed * 1000 + index)
        model = BidModel.fit(records, source=f"{args.policy} on {', '.join(name for name, _ in tables)}")
        model.save(args.out)
        bids = np.array([bid - winners for _, winners, bid in records])
        print(f"{len(records):,} bids of {args.hands:,} hands by {args.policy} counted into {args.out}: "
              f"bid = likely winners in {np.mean(bids == 0):.1%}, within one in {np.mean(abs(bids) <= 1):.1%}")
        return 0
    check_positive(deals=args.deals)
    check_output_file(args.json)
    model = BidModel.load(args.model)
    figures = evaluate(model, tables, args.policy, args.hands, args.deals, args.seed)
    print(f"Card locations from each seat's view once the bids are in, {figures['views']:,} views of "
          f"{args.hands:,} held-out hands bid by {args.policy}, {args.deals} deals each:")
    print(f"  log-loss per unseen card: uniform {figures['log_loss_uniform']:.4f} (exact),"
          f" {figures['log_loss_uniform_sampled']:.4f} (estimated from the same deals unweighted);"
          f" bid model {figures['log_loss_model']:.4f} ({figures['log_loss_model'] / figures['log_loss_uniform'] - 1:+.1%})")
    print("  calibration of the model (predicted chance, observed frequency, cards):")
    for row in figures["calibration"]:
        if row["cards"]:
            print(f"    {row['low']:.1f}-{row['high']:.1f}  {row['predicted']:.3f}  {row['observed']:.3f}  {row['cards']:,}")
    write_json(args.json, figures)
    return 0


def evaluate(model: BidModel, tables, policy: str, hands: int, deals: int, seed: int) -> dict:
    """Log-loss of the true card locations under the uniform sampler and the model, and the model's calibration."""
    np_rng = np.random.default_rng(seed)
    rng = random.Random(seed)
    bins = 10
    predicted_sum, observed_sum, counts = np.zeros(bins), np.zeros(bins), np.zeros(bins, dtype=np.int64)
    loss_uniform = loss_sampled = loss_model = 0.0
    cards_scored = views = 0
    for index, (_, rules) in enumerate(tables):
        bot = _bot(policy, rules, seed)
        pick = random.Random(seed * 1000 + index)
        for hand in range(_share(hands, len(tables), index)):
            game = BlackoutGame(rules, seed=10**9 + seed * 1_000_003 + index * 10_007 + hand,
                                start_round=pick.randrange(rules.num_rounds))
            while game.phase == "bid":
                game.step(bot.act(game.view(game.current_player)))
            if game.phase != "play":
                continue
            for seat in range(rules.num_players):
                view = game.view(seat)
                sampler = DealSampler(view)
                places = sampler.seats + [None]  # the other seats, then out of play
                unseen = sampler.pool_list
                if not unseen or len(places) < 2:
                    continue
                truth = []
                for card in unseen:
                    holder = next((p for p, s in enumerate(sampler.seats) if card in game.hands[s]), len(places) - 1)
                    truth.append(holder)
                uniform = np.array(sampler.capacity, dtype=float) / len(unseen)
                drawn = sampler.draw(deals, np_rng, rng)
                weights = BidBelief(view, model).weights(drawn)
                hands_drawn = np.array(drawn, dtype=np.uint64)
                where = np.zeros((len(drawn), len(unseen), len(places)))  # deal, card, place
                for i, card in enumerate(unseen):
                    bit = np.uint64(1 << card)
                    held = (hands_drawn[:, sampler.seats] & bit) != 0
                    where[:, i, :-1] = held
                    where[:, i, -1] = ~held.any(axis=1)
                # a pseudo-count of the uniform chance keeps every chance above zero
                chances = (np.tensordot(weights, where, axes=1) + 0.5 * weights.mean() * uniform) / (weights.sum() + 0.5 * weights.mean())
                sampled = (where.sum(axis=0) + 0.5 * uniform) / (len(drawn) + 0.5)
                for i, holder in enumerate(truth):
                    loss_uniform -= math.log(uniform[holder])
                    loss_sampled -= math.log(sampled[i, holder])
                    loss_model -= math.log(chances[i, holder])
                    for place in range(len(places)):
                        if uniform[place] == 0:
                            continue
                        b = min(int(chances[i, place] * bins), bins - 1)
                        predicted_sum[b] += chances[i, place]
                        observed_sum[b] += place == holder
                        counts[b] += 1
                cards_scored += len(unseen)
                views += 1
    if not cards_scored:
        raise ValueError("belief eval: no view with unseen cards (hands too few?)")
    calibration = [
        {"low": b / bins, "high": (b + 1) / bins, "cards": int(counts[b]),
         "predicted": float(predicted_sum[b] / counts[b]) if counts[b] else 0.0,
         "observed": float(observed_sum[b] / counts[b]) if counts[b] else 0.0}
        for b in range(bins)
    ]
    return {"policy": policy, "hands": hands, "deals": deals, "seed": seed, "views": views, "cards": cards_scored,
            "log_loss_uniform": loss_uniform / cards_scored, "log_loss_uniform_sampled": loss_sampled / cards_scored,
            "log_loss_model": loss_model / cards_scored,
            "calibration": calibration}
