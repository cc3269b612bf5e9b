"""``blackout play``: play Blackout in the terminal against bots or trained policies.

Examples::

    blackout play                                  # you and three heuristic bots, standard rules
    blackout play --rules short --bots search      # a short match against the search bot
    blackout play --bots heuristic,search,ppo:runs/ppo/checkpoint.pt
    blackout play --humans 2 --hot-seat            # two people at one keyboard
    blackout play --resume                         # continue the saved game
    blackout play --why                            # each bot's reasons under its move
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from blackout_env import PlayerView, Rules, SaveFileError
from blackout_env.agents.policies import Explanation, explain

from ..play.session import PlaySession, default_save_path, new_session, read_save


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = "At any prompt: s score sheet, l last trick, h help, q save and quit."
    parser.add_argument("--rules", default=None, help="a rules preset or a YAML file (default: standard)")
    parser.add_argument("--players", type=int, default=None, help="number of players (overrides the rules)")
    parser.add_argument("--humans", type=int, default=None, help="how many seats are people (default 1); they take seats 0, 1, ... and bots the rest")
    parser.add_argument(
        "--bots",
        default=None,
        help="policy for the bot seats: one for all, or one per seat, comma separated "
        "(random, heuristic, search, ismcts, ppo (the shipped generalist, every table), "
        "ppo-standard (the standard 4-player specialist), ppo:PATH, ppo+search, ppo+search-deep, ppo+rollout, rllib:PATH; default heuristic)",
    )
    parser.add_argument("--seed", type=int, default=None, help="seed of the deal and the bots (default: random)")
    parser.add_argument("--hot-seat", action="store_true", help="several people at one keyboard: hide each hand until its owner presses Enter")
    parser.add_argument("--save", default=None, help=f"save file (default {default_save_path()})")
    parser.add_argument("--resume", action="store_true", help="continue the game in the save file")
    parser.add_argument("--new", action="store_true", help="start a new game even if the save file holds an unfinished one (replaces it)")
    parser.add_argument("--ascii", action="store_true", help="plain ASCII output (no suit symbols)")
    parser.add_argument(
        "--why",
        action="store_true",
        help="print each bot decision's reasons under its move (a card play's numbers per card only when no "
        "person plays) and, at your bid, the heuristic's expected score of each bid",
    )


def run(args: argparse.Namespace) -> int:
    path = Path(args.save).expanduser() if args.save else default_save_path()
    if args.resume and args.new:
        raise ValueError("--resume and --new: give one (--resume continues the saved game, --new replaces it)")
    if args.resume:
        given = [flag for flag, value in (("--rules", args.rules), ("--players", args.players),
                 ("--humans", args.humans), ("--bots", args.bots), ("--seed", args.seed)) if value is not None]
        if given:
            print(f"Note: {', '.join(given)} ignored: a resumed game keeps its own settings.")
        try:
            saved = read_save(path)
        except SaveFileError as error:
            print(f"blackout play: cannot resume: {error}\nThe save file was left as it is.", file=sys.stderr)
            return 2
        saved.hot_seat = saved.hot_seat or args.hot_seat
    else:
        if path.exists() and not args.new:
            problem = _occupied(path)
            if problem is not None:
                print(f"blackout play: {problem}", file=sys.stderr)
                return 2
        rules = Rules.resolve(args.rules or "standard")
        if args.players is not None:
            rules = rules.replace(num_players=args.players)
        humans = 1 if args.humans is None else args.humans
        if args.hot_seat and humans == 0:
            raise ValueError("--hot-seat: hides each person's hand from the others, but --humans 0 seats nobody")
        if args.bots is not None and humans == rules.num_players:
            raise ValueError(f"--bots: every seat of the {rules.num_players} is a person (--humans {humans}): no bot plays")
        saved = new_session(
            rules,
            humans=humans,
            bots="heuristic" if args.bots is None else args.bots,
            seed=args.seed,
            hot_seat=args.hot_seat,
        )
    suggest_bid, explain_bid = _bid_hints(saved.bot_seed)
    try:
        session = PlaySession(
            saved, path, suggest_bid=suggest_bid, unicode=False if args.ascii else None,
            why=args.why, explain_bid=explain_bid if args.why else None,
        )
    except ValueError as error:
        if not args.resume:
            raise
        print(f"blackout play: cannot resume {path}: {error}\nThe save file was left as it is.", file=sys.stderr)
        return 2
    return session.run()


def _occupied(path: Path) -> str | None:
    """Why a new game may not replace the save at ``path`` (None when it may: the saved game is over)."""
    try:
        saved = read_save(path)
    except SaveFileError as error:
        return (
            f"{error}\nThe file was left as it is. Choose another file with --save PATH, "
            "or replace it with --new."
        )
    game = saved.game
    if game.is_over:
        return None
    return (
        f"{path} holds an unfinished game (hand {game.round_index + 1} of {game.num_rounds}).\n"
        "Continue it with --resume, or start over with --new (which replaces it)."
    )


def _bid_hints(seed: int) -> tuple[Callable[[PlayerView], int], Callable[[PlayerView], Explanation]]:
    """The heuristic bot's bid for a person's view (the suggested bid), and its reasons (``--why``)."""
    from blackout_baselines import make_bot

    bot = make_bot("heuristic", seed=seed)

    def suggest(view: PlayerView) -> int:
        bot.seed(seed)  # the same view always gets the same suggestion
        return int(bot.suggest_bid(view))

    def reasons(view: PlayerView) -> Explanation:
        bot.seed(seed)
        return explain(bot, view)

    return suggest, reasons
