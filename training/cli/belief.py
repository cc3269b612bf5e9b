"""``blackout belief``: fit the models of the search's inferred hidden cards, and measure them.

- ``blackout belief fit --out FILE``: a policy (``--policy``, the shipped ``ppo`` by default)
  makes every decision of ``--hands`` fresh hands over the ``--rules`` tables (every preset by
  default); its bids are counted into a :class:`~blackout_baselines.belief.BidModel`
  (``--kind bids``, the default) or its cards played into a
  :class:`~blackout_baselines.play_model.PlayModel` (``--kind play``).
- ``blackout belief eval``: on held-out hands played by the same policy, from each seat's view
  once every bid is in (``--at bids``) or the acting seat's view at every card played
  (``--at play``), the chance of each unseen card being in each other seat's hand (or out of
  play) under ``--deals`` deals of the uniform sampler weighted by ``--belief`` (the bids, the
  play, or both) and under the same deals unweighted (and, ignoring voids, exactly); the
  log-loss of where the cards really are under each, by tricks played, and the calibration of
  the weighted chances (predicted against observed, in ten bins).
"""

from __future__ import annotations

import argparse
import math
import random
import sys

import numpy as np
from blackout_baselines.belief import DEFAULT_BID_MODEL, Belief, BidModel, bid_records
from blackout_baselines.deals import DealSampler
from blackout_baselines.play_model import DEFAULT_PLAY_MODEL, PlayModel, play_records

from blackout_env import BlackoutGame, Rules, preset_names

from ..bench import check_output_file, check_positive, write_json

BELIEFS = ("bids", "play", "bids+play")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True
    fit = sub.add_parser("fit", help="count a policy's bids (or plays) into a bid (or play) model file")
    evaluate = sub.add_parser("eval", help="log-loss and calibration of the weighted deals' card locations on held-out hands")
    for command in (fit, evaluate):
        command.add_argument("--policy", default="ppo", metavar="SPEC", help="the policy making every decision (default ppo)")
        command.add_argument("--rules", nargs="+", default=None, metavar="RULES",
                             help="presets or YAML files, hands shared among them (default: every preset)")
        command.add_argument("--seed", type=int, default=0, help="seed of the hands (default 0; eval: 1)")
        command.add_argument("--players", type=int, nargs="+", default=None, metavar="N",
                             help="each table at each of these player counts, 3-7 (default: the rules' own)")
    fit.add_argument("--kind", choices=("bids", "play"), default="bids",
                     help="bids (default): a bid model; play: a play model")
    fit.add_argument("--hands", type=int, default=20000, help="hands in all (default 20000)")
    fit.add_argument("--out", required=True, help="the model file to write (.json)")
    evaluate.add_argument("--belief", choices=BELIEFS, default="bids",
                          help="what weighs the deals: bids (default), play, or bids+play")
    evaluate.add_argument("--model", default=None, help="bid model file, with --belief bids or bids+play "
                          "(default: the shipped one)")
    evaluate.add_argument("--play-model", default=None,
                          help="play model file, with --belief play or bids+play (default: the shipped one)")
    evaluate.add_argument("--at", choices=("bids", "play"), default="bids",
                          help="the views scored: bids (default), every seat's once the bids are in; play, the "
                               "acting seat's at every card played")
    evaluate.add_argument("--hands", type=int, default=500, help="held-out hands in all (default 500)")
    evaluate.add_argument("--deals", type=int, default=2000, help="weighted deals per view (default 2000)")
    evaluate.add_argument("--json", default=None, help="also write the figures to this JSON file")
    evaluate.set_defaults(seed=1)


def _tables(names: list[str] | None, players: list[int] | None = None) -> list[tuple[str, Rules]]:
    """The tables: each of ``names`` (every preset by default), at each of ``players`` (default: the rules' own).

    With ``players``, a table whose rules cannot seat that many (a hand too large for the deck) is skipped
    and named on stderr; none left is an error."""
    names = names or preset_names()
    tables = [(name, Rules.resolve(name)) for name in names]
    if not players:
        return tables
    for count in players:
        if not 3 <= count <= 7:
            raise ValueError(f"--players must be 3..7, got {count}")
    seated = []
    for name, rules in tables:
        for count in players:
            try:
                seated.append((f"{name} ({count} players)", rules.replace(num_players=count)))
            except ValueError as error:
                print(f"blackout belief: skipped {name} at {count} players ({error})", file=sys.stderr)
    if not seated:
        raise ValueError(f"--players {' '.join(map(str, players))}: no table of --rules seats that many")
    return seated


def _bot(spec: str, rules: Rules, seed: int):
    from ..agents.policies import load_policy

    return load_policy(spec, rules, seed)


def _share(total: int, parts: int, index: int) -> int:
    return total // parts + (index < total % parts)


def run(args: argparse.Namespace) -> int:
    from ..evaluation.tournament import single_threaded_torch

    try:  # loaded now (a policy loads it later), so that it runs on one thread below
        import torch  # noqa: F401
    except ImportError:  # baselines only
        pass
    with single_threaded_torch():  # one view at a time: torch's thread pool only waits (and stalls beside a busy core)
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    check_positive(hands=args.hands)
    if args.seed < 0:
        raise ValueError(f"--seed must be 0 or more, got {args.seed}")
    tables = _tables(args.rules, args.players)
    if args.action == "fit":
        if not args.out.endswith(".json"):
            raise ValueError(f"--out {args.out!r}: a model file ends in .json")
        check_output_file(args.out, "--out")
        collect = bid_records if args.kind == "bids" else play_records
        records = []
        for index, (_, rules) in enumerate(tables):
            hands = _share(args.hands, len(tables), index)
            if hands:
                records += collect(_bot(args.policy, rules, args.seed), rules, hands, seed=args.seed * 1000 + index)
        source = f"{args.policy} on {', '.join(name for name, _ in tables)}"
        if args.kind == "play":
            model = PlayModel.fit(records, source=source)
            model.save(args.out)
            offered = [s for s, _ in records]
            print(f"{len(records):,} cards played in {args.hands:,} hands by {args.policy} counted into {args.out}"
                  f" ({len(set(offered))} situations seen)")
            return 0
        model = BidModel.fit(records, source=source)
        model.save(args.out)
        bids = np.array([bid - winners for _, winners, bid in records])
        print(f"{len(records):,} bids of {args.hands:,} hands by {args.policy} counted into {args.out}: "
              f"bid = likely winners in {np.mean(bids == 0):.1%}, within one in {np.mean(abs(bids) <= 1):.1%}")
        return 0
    check_positive(deals=args.deals)
    check_output_file(args.json)
    if args.model is not None and "bids" not in args.belief:
        raise ValueError(f"--model: a bid model, but --belief {args.belief} does not weigh by the bids")
    if args.play_model is not None and "play" not in args.belief:
        raise ValueError(f"--play-model: a play model, but --belief {args.belief} does not weigh by the play")
    if args.belief == "play" and args.at == "bids":
        raise ValueError("--belief play --at bids: no card is played once the bids are in; use --at play")
    bids = BidModel.load(args.model or DEFAULT_BID_MODEL) if "bids" in args.belief else None
    play = PlayModel.load(args.play_model or DEFAULT_PLAY_MODEL) if "play" in args.belief else None
    figures = evaluate(tables, args.policy, args.hands, args.deals, args.seed, bids=bids, play=play, at=args.at)
    figures["belief"] = args.belief
    where = "once the bids are in" if args.at == "bids" else "at every card played"
    print(f"Card locations from each seat's view {where}, {figures['views']:,} views of {args.hands:,} held-out "
          f"hands played by {args.policy}, {args.deals} deals each, weighted by {args.belief}:")
    model_vs = figures["log_loss_model"] / figures["log_loss_uniform_sampled"] - 1
    print(f"  log-loss per unseen card: uniform {figures['log_loss_uniform']:.4f} (exact, voids ignored),"
          f" {figures['log_loss_uniform_sampled']:.4f} (the same deals unweighted);"
          f" weighted {figures['log_loss_model']:.4f} ({model_vs:+.1%} on the unweighted;"
          f" {figures['log_loss_model_all_deals']:.4f} counting the weighted deals as all {args.deals})")
    for row in figures["by_tricks_played"]:
        change = row["log_loss_model"] / row["log_loss_uniform_sampled"] - 1
        print(f"    {row['phase']:<28} {row['cards']:>8,} cards: unweighted {row['log_loss_uniform_sampled']:.4f},"
              f" weighted {row['log_loss_model']:.4f} ({change:+.1%})")
    print("  calibration of the weighted chances (predicted chance, observed frequency, cards):")
    for row in figures["calibration"]:
        if row["cards"]:
            print(f"    {row['low']:.1f}-{row['high']:.1f}  {row['predicted']:.3f}  {row['observed']:.3f}  {row['cards']:,}")
    write_json(args.json, figures)
    return 0


def _views(game: BlackoutGame, bot, at: str):
    """The views to score in one hand: every seat's once the bids are in (``at="bids"``), or the acting
    seat's at every card play (``at="play"``); the game is played on by ``bot``."""
    while game.phase == "bid":
        game.step(bot.act(game.view(game.current_player)))
    if game.phase != "play":
        return
    if at == "bids":
        for seat in range(game.rules.num_players):
            yield game.view(seat)
        return
    start = game.round_index
    while game.round_index == start and game.phase == "play":
        view = game.view(game.current_player)
        yield view
        game.step(bot.act(view))


def evaluate(tables, policy: str, hands: int, deals: int, seed: int, bids: BidModel | None = None,
             play: PlayModel | None = None, at: str = "bids") -> dict:
    """Log-loss of the true card locations under the uniform sampler and the weighted deals, by tricks
    played, and the calibration of the weighted chances."""
    np_rng = np.random.default_rng(seed)
    rng = random.Random(seed)
    bins = 10
    predicted_sum, observed_sum, counts = np.zeros(bins), np.zeros(bins), np.zeros(bins, dtype=np.int64)
    phases = ["before the first trick ends", "1 trick played", "2 tricks played", "3 or more"]
    loss = np.zeros((4, len(phases)))  # uniform exact, uniform from the deals, weighted, weighted plain; by tricks
    scored = np.zeros(len(phases), dtype=np.int64)
    ess, viewed = np.zeros(len(phases)), np.zeros(len(phases), dtype=np.int64)  # effective share of the deals
    views = 0
    for index, (_, rules) in enumerate(tables):
        bot = _bot(policy, rules, seed)
        pick = random.Random(seed * 1000 + index)
        for hand in range(_share(hands, len(tables), index)):
            game = BlackoutGame(rules, seed=10**9 + seed * 1_000_003 + index * 10_007 + hand,
                                start_round=pick.randrange(rules.num_rounds))
            for view in _views(game, bot, at):
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
                weights = Belief(view, bids, play=play).weights(drawn)
                hands_drawn = np.array(drawn, dtype=np.uint64)
                where = np.zeros((len(drawn), len(unseen), len(places)))  # deal, card, place
                for i, card in enumerate(unseen):
                    bit = np.uint64(1 << card)
                    held = (hands_drawn[:, sampler.seats] & bit) != 0
                    where[:, i, :-1] = held
                    where[:, i, -1] = ~held.any(axis=1)
                # half a deal of the uniform chance keeps every chance above zero; the weighted deals count as
                # their effective number (Kish's), so a few heavy deals are not read as certainty
                effective = weights.sum() ** 2 / (weights ** 2).sum()
                chances = (np.tensordot(weights / weights.sum(), where, axes=1) * effective + 0.5 * uniform) / (effective + 0.5)
                # the same with the weighted deals counted as all the deals drawn (the estimate before 2026-12-07)
                plain = (np.tensordot(weights / weights.sum(), where, axes=1) * len(drawn) + 0.5 * uniform) / (len(drawn) + 0.5)
                sampled = (where.sum(axis=0) + 0.5 * uniform) / (len(drawn) + 0.5)
                phase = min(sum(view.tricks_won), len(phases) - 1)
                ess[phase] += effective / len(drawn)
                for i, holder in enumerate(truth):
                    loss[:, phase] -= (math.log(uniform[holder]), math.log(sampled[i, holder]), math.log(chances[i, holder]),
                                       math.log(plain[i, holder]))
                    for place in range(len(places)):
                        if uniform[place] == 0:
                            continue
                        b = min(int(chances[i, place] * bins), bins - 1)
                        predicted_sum[b] += chances[i, place]
                        observed_sum[b] += place == holder
                        counts[b] += 1
                scored[phase] += len(unseen)
                viewed[phase] += 1
                views += 1
    if not scored.sum():
        raise ValueError("belief eval: no view with unseen cards (hands too few?)")
    calibration = [
        {"low": b / bins, "high": (b + 1) / bins, "cards": int(counts[b]),
         "predicted": float(predicted_sum[b] / counts[b]) if counts[b] else 0.0,
         "observed": float(observed_sum[b] / counts[b]) if counts[b] else 0.0}
        for b in range(bins)
    ]
    total = loss.sum(axis=1) / scored.sum()
    by_phase = [{"phase": name, "cards": int(scored[k]), "log_loss_uniform": float(loss[0, k] / scored[k]),
                 "log_loss_uniform_sampled": float(loss[1, k] / scored[k]), "log_loss_model": float(loss[2, k] / scored[k]),
                 "effective_deals": float(ess[k] / viewed[k])} for k, name in enumerate(phases) if scored[k]]
    return {"policy": policy, "hands": hands, "deals": deals, "seed": seed, "at": at, "views": views,
            "cards": int(scored.sum()), "log_loss_uniform": float(total[0]), "log_loss_uniform_sampled": float(total[1]),
            "log_loss_model": float(total[2]), "log_loss_model_all_deals": float(total[3]), "effective_deals": float(ess.sum() / viewed.sum()), "by_tricks_played": by_phase, "calibration": calibration}
