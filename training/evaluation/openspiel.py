"""Our policies against OpenSpiel's IS-MCTS on mirrored deals: the cross-check against an algorithm nobody here wrote.

One :class:`~blackout_env.game.engine.BlackoutGame` and one OpenSpiel ``oh_hell`` state are stepped together,
the same cards in every seat (cards map by rank and suit, :func:`to_openspiel_card`), the legal actions
checked equal at every decision, every hand scored by our rules; OpenSpiel's bots search from a state
rebuilt from their seat's view (:class:`OpenSpielPlayer`; with ``redeals`` K > 1 from K such states, one
search each, their visit counts summed). :func:`run_agent` plays one agent's duplicate
seating and :func:`summarise` gives its figures; :func:`speed` times decisions against OpenSpiel's bot.
``blackout bench openspiel_ismcts`` (:mod:`blackout_training.bench.openspiel_ismcts`) is the command,
and its docstring the full description. The same player is a policy of ours, the spec
``openspiel_ismcts`` of ``blackout eval`` and ``blackout ladder`` (:func:`load_openspiel_ismcts`): an
external anchor on the ladder. Needs ``open_spiel`` (the ``bench`` extra).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np

from blackout_env import BlackoutGame, Rules

from ..agents.policies import load_policy
from .tournament import confidence_half_width, single_threaded_torch

__all__ = [
    "to_openspiel_card", "from_openspiel_action", "require_openspiel", "simulations_per_search", "OpenSpielPlayer",
    "check_openspiel_rules", "load_openspiel_ismcts", "openspiel_rules_problems", "play_deal", "pool_sittings",
    "default_field", "run_agent", "speed", "summarise", "table",
]

INSTALL_BENCH = "pip install -e \".[bench]\", or pip install \"blackout-rl[bench]\""
MISSING = f"OpenSpiel is not installed: this benchmark needs the bench extra ({INSTALL_BENCH})"

_OPENSPIEL_SUIT = (0, 1, 3, 2)  # ours C D H S -> OpenSpiel's suit order C D S H
_OUR_SUIT = (0, 1, 3, 2)  # and back (the map is its own inverse)


def require_openspiel() -> Any:
    """The ``pyspiel`` module; ImportError naming the extra to install when it is missing."""
    try:
        import pyspiel
    except ImportError:
        raise ImportError(MISSING) from None
    return pyspiel


def to_openspiel_card(card: int) -> int:
    """Our card (``suit * 13 + rank``, suits C D H S) as OpenSpiel's ``oh_hell`` card (``rank * 4 + suit``, C D S H)."""
    return (card % 13) * 4 + _OPENSPIEL_SUIT[card // 13]


def from_openspiel_action(action: int) -> int:
    """An OpenSpiel ``oh_hell`` action as ours: cards map by rank and suit, bids ``52 + k`` are the same."""
    if action >= 52:
        return action
    return _OUR_SUIT[action % 4] * 13 + action // 4


def to_openspiel_action(action: int) -> int:
    return to_openspiel_card(action) if action < 52 else action


OPENSPIEL_SPEC = "openspiel_ismcts"

# summed shares this close to the best count as tied (the shares are visit counts over the same total, so a
# true tie can differ only by rounding)
_TIE_TOLERANCE = 1e-9


def simulations_per_search(simulations: int, redeals: int, flag: str = "") -> int:
    """S = ``simulations // redeals``: the simulations of each of a decision's ``redeals`` searches.

    ``simulations`` is the decision's total budget (K x S of it is spent; the remainder of the division
    is not). ValueError naming the option (``flag`` before its name: ``"--"`` on the command line) when
    ``redeals`` is below 1 or S below 2: OpenSpiel's IS-MCTS spends a search's first simulation on
    expanding its root, so a search of one simulation visits no action and has no policy to give.
    """
    if isinstance(redeals, bool) or not isinstance(redeals, int) or redeals < 1:
        raise ValueError(f"{flag}redeals must be a whole number >= 1, got {redeals!r}")
    per_search = simulations // redeals
    if per_search < 2:
        raise ValueError(
            f"{flag}simulations {simulations} over {flag}redeals {redeals} leaves {per_search} simulation(s) per "
            f"search: each search needs at least 2 (OpenSpiel's IS-MCTS spends its first on expanding the root), "
            f"so {flag}simulations must be at least {2 * redeals}"
        )
    return per_search


class OpenSpielPlayer:
    """OpenSpiel's IS-MCTS as a seat of the mirrored games.

    With ``redeal`` (the default) it searches from an OpenSpiel state rebuilt from its seat's view,
    the other seats' hidden cards drawn anew (:func:`openspiel_state_from_view`), not from the
    mirrored state: OpenSpiel's ``oh_hell`` ``ResampleFromInfostate`` (open_spiel 2.0.2) deals the
    other seats only cards that were really dealt to them, so from the mirrored state every
    determinization knows which cards are out of play (11 of the 41 unseen cards in a 10-card hand),
    which no player can know. ``redeal=False`` searches from the mirrored state (the earlier rounds).

    One redeal fixes one set of out-of-play cards for all of a decision's simulations. ``redeals`` K > 1
    (with ``redeal``) draws K states from the view instead and searches each with S = ``simulations // K``
    simulations (:func:`simulations_per_search`: ``simulations`` is the decision's total, so K redeals
    and one cost the same simulations), sums the K searches' normalized visit counts
    (``ISMCTSBot.get_policy`` with ``NORMALIZED_VISIT_COUNT``) and plays the action with the largest sum;
    ties go to the lowest action in our numbering (cards before bids, a card by suit C D H S then rank),
    so the choice depends on the searches alone; a decision with one legal action is played without search.
    ``redeals=1`` (the default) is the single search, unchanged: the same bot, seeds and searched states.

    Seeded (:meth:`seed`), the redealt states are the same from run to run; OpenSpiel's C++ search is not
    quite: it breaks ties between equal UCB values in its hash map's iteration order, which changes from
    run to run (even within one process), so its actions repeat only where it meets no such tie.

    It is also a policy of ours (:meth:`act`, the spec ``openspiel_ismcts`` of ``blackout eval`` and
    ``blackout ladder``, :func:`load_openspiel_ismcts`): a seat there has no mirrored state, so it
    searches from states redealt from its view, as the cross-check's field does with ``redeal``.
    """

    openspiel = True

    def __init__(
        self, pyspiel: Any, simulations: int, uct_c: float, rollout_seed: int = 0, redeal: bool = True,
        redeals: int = 1, name: str = "openspiel_ismcts",
    ) -> None:
        self.per_search = simulations_per_search(simulations, redeals)
        if redeals > 1 and not redeal:
            raise ValueError(f"redeals={redeals} draws the hidden cards from the seat's view: it needs redeal=1")
        self.pyspiel, self.simulations, self.uct_c = pyspiel, simulations, uct_c
        self.rollout_seed = rollout_seed
        self.redeal = bool(redeal)
        self.redeals = redeals
        self.name = name
        self.bot = None
        self.rng = np.random.default_rng(0)
        self._rules_checked: Rules | None = None

    def seed(self, value: int) -> None:
        """A fresh ISMCTSBot (and rollout evaluator, and redeals) seeded with ``value``."""
        pyspiel = self.pyspiel
        self.rng = np.random.default_rng([value, 7])
        # one search plays its most visited action; K searches give their visit shares, to be summed
        final_policy = (
            pyspiel.ISMCTSFinalPolicyType.MAX_VISIT_COUNT if self.redeals == 1
            else pyspiel.ISMCTSFinalPolicyType.NORMALIZED_VISIT_COUNT
        )
        # evaluation reseeds with any 32-bit number; OpenSpiel's seeds are C ints
        self.bot = pyspiel.ISMCTSBot(
            value % 2**31, pyspiel.RandomRolloutEvaluator(1, (value + self.rollout_seed) % 2**31), self.uct_c,
            self.per_search, -1, final_policy, False, False,
        )

    def search_state(self, state: Any, view: Any = None) -> Any:
        """The state the bot searches from: with ``redeal``, one rebuilt from ``view``; else ``state``."""
        if self.redeal and view is not None:
            return openspiel_state_from_view(self.pyspiel, view, self.rng)
        return state

    def act_openspiel(self, state: Any, view: Any = None) -> int:
        """The bot's action in ``state`` (the mirrored state), searched from :meth:`search_state`.

        With ``redeals`` K > 1: from K states rebuilt from ``view`` (required), their visit shares summed.
        """
        if self.redeals == 1:
            return from_openspiel_action(self.bot.step(self.search_state(state, view)))
        if view is None:
            raise ValueError("redeals > 1 rebuilds the searched states from the seat's view: pass the view")
        legal = sorted(view.legal_actions)  # the mirrored state's, checked equal at every decision
        if len(legal) == 1:
            return legal[0]
        shares = dict.fromkeys(legal, 0.0)
        for _ in range(self.redeals):
            for action, share in self.bot.get_policy(openspiel_state_from_view(self.pyspiel, view, self.rng)):
                shares[from_openspiel_action(action)] += share
        best = max(shares.values())
        return next(a for a in legal if shares[a] >= best - _TIE_TOLERANCE)

    def act(self, view: Any) -> int:
        """The action for ``view``'s seat, as a policy of ours (``blackout eval``, ``blackout ladder``).

        Searched from states redealt from the view alone (``redeals`` of them); a decision with one
        legal action is played without search. ValueError when the view's rules are not a game that
        OpenSpiel's ``oh_hell`` plays (:func:`openspiel_rules_problems`).
        """
        if view.rules != self._rules_checked:
            check_openspiel_rules(view.rules, self.name)
            self._rules_checked = view.rules
        if len(view.legal_actions) == 1:
            return int(view.legal_actions[0])
        if self.bot is None:
            self.seed(0)
        return self.act_openspiel(None, view)


def parse_openspiel_spec(spec: str, simulations: int = 500, uct_c: float = 2.0) -> dict[str, Any] | None:
    """``openspiel_ismcts[:simulations=N,uct_c=C,rollout_seed=K,redeal=0|1,redeals=R]`` as keyword arguments of :class:`OpenSpielPlayer`.

    None for any other spec. ``rollout_seed``: an offset added to the bot's seed to seed its rollout
    evaluator (0, the default, seeds both with the same number, as the field's bot is seeded).
    ``redeals``: states redealt from the view per decision, ``simulations`` (the total) shared among them.
    """
    name, _, options = spec.partition(":")
    if name != OPENSPIEL_SPEC:
        return None
    parsed: dict[str, Any] = {"simulations": simulations, "uct_c": uct_c, "rollout_seed": 0, "redeal": 1, "redeals": 1}
    for option in filter(None, options.split(",")):
        key, _, value = option.partition("=")
        if key not in parsed:
            raise ValueError(f"{spec}: unknown option {key!r} (options: {', '.join(parsed)})")
        try:
            number = float(value) if key == "uct_c" else int(value)
        except ValueError:
            number = None
        low = {"simulations": 1, "uct_c": 0, "rollout_seed": 0, "redeal": 0, "redeals": 1}[key]
        if number is None or not number >= low or (key == "redeal" and number > 1):
            wanted = "a number" if key == "uct_c" else "a whole number"
            raise ValueError(f"{spec}: {key} must be {wanted} >= {low}, got {value!r}")
        parsed[key] = number
    try:
        simulations_per_search(parsed["simulations"], parsed["redeals"])
    except ValueError as error:
        raise ValueError(f"{spec}: {error}") from None
    if parsed["redeals"] > 1 and not parsed["redeal"]:
        raise ValueError(f"{spec}: redeals > 1 draws the hidden cards from the seat's view: it needs redeal=1")
    return parsed


def openspiel_rules_problems(rules: Rules) -> list[str]:
    """How ``rules`` differ from the game OpenSpiel's ``oh_hell`` plays, in words (empty: it plays them).

    Its game: 3 to 7 players, 52 cards, trump named by a card turned after the deal (so a hand leaves
    at least one card to turn), the dealer's hook, trump led at any time. Its scoring is its own (a
    point a trick plus 10 for an exact bid) whatever ours is: its search aims at that, and our rules
    score its games, as in the cross-check.
    """
    problems = []
    if rules.jokers:
        problems.append(f"jokers {rules.jokers} (it has none)")
    if rules.trump != "turned":
        problems.append(f"trump {rules.trump!r} (it turns a card for trump)")
    if not rules.hook:
        problems.append("no hook (its dealer always has the hook)")
    if rules.lead_trump != "any":
        problems.append(f"lead_trump {rules.lead_trump!r} (it leads trump at any time)")
    largest = max(rules.hand_sizes)
    if rules.num_players * largest >= rules.deck_size:
        problems.append(f"hands of {largest} cards at {rules.num_players} players leave no card to turn")
    return problems


def check_openspiel_rules(rules: Rules, spec: str = OPENSPIEL_SPEC) -> None:
    """ValueError naming ``spec`` and the rules' differences when OpenSpiel's ``oh_hell`` does not play ``rules``."""
    problems = openspiel_rules_problems(rules)
    if problems:
        raise ValueError(f"policy {spec!r}: OpenSpiel's oh_hell does not play these rules: {'; '.join(problems)}")


def load_openspiel_ismcts(argument: str | None, rules: Rules | None, seed: int | None) -> OpenSpielPlayer:
    """The loader behind the policy spec ``openspiel_ismcts[:simulations=N,uct_c=C,rollout_seed=K,redeals=R]``.

    OpenSpiel's IS-MCTS (``pyspiel.ISMCTSBot``, random rollouts) in a seat of ``blackout eval`` or
    ``blackout ladder``: an external anchor, the player of the cross-check with its options
    (:func:`parse_openspiel_spec`; default 500 simulations, ``uct_c`` 2), always redealing from its view
    (``redeal=0``, the mirrored state, exists only in the cross-check). ValueError (one line) for a bad
    option, rules OpenSpiel's ``oh_hell`` does not play, or OpenSpiel not installed (the ``bench`` extra).
    """
    spec = OPENSPIEL_SPEC if argument is None else f"{OPENSPIEL_SPEC}:{argument}"
    options = parse_openspiel_spec(spec)
    if not options["redeal"]:
        raise ValueError(
            f"policy {spec!r}: redeal=0 searches from the cross-check's mirrored state, which a seat of eval or "
            f"the ladder does not have: as a policy it always redeals from its view"
        )
    if rules is not None:
        check_openspiel_rules(rules, spec)
    try:
        pyspiel = require_openspiel()
    except ImportError:
        raise ValueError(
            f"policy {spec!r} needs OpenSpiel, which is not installed: install the bench extra ({INSTALL_BENCH})"
        ) from None
    player = OpenSpielPlayer(pyspiel, **options, name=spec)
    player.seed(0 if seed is None else seed)
    return player


def load_player(pyspiel: Any, spec: str, rules: Rules, seed: int) -> Any:
    """OpenSpiel's IS-MCTS for an ``openspiel_ismcts`` spec, else our policy (:func:`load_policy`)."""
    parsed = parse_openspiel_spec(spec)
    if parsed is not None:
        return OpenSpielPlayer(pyspiel, **parsed)
    return load_policy(spec, rules, seed)


def openspiel_state_from_view(pyspiel: Any, view: Any, rng: np.random.Generator) -> Any:
    """An OpenSpiel ``oh_hell`` state built from one of our views alone (standard rules, 52 cards).

    The hidden cards are drawn consistently with the view (:func:`blackout_baselines.deals.sample_deal`),
    so the state's information state for the viewer is the one the viewer holds in the mirrored game:
    a check that our views carry everything OpenSpiel's information state does.
    """
    import random

    from blackout_baselines.deals import initial_hands, sample_deal

    n = view.num_players
    now = sample_deal(view, random.Random(int(rng.integers(2**62))), rng)
    hands = [sorted(cards) for cards in initial_hands(view, now)]
    os_game = pyspiel.load_game("oh_hell", {"players": n, "num_tricks_fixed": view.hand_size})
    state = os_game.new_initial_state()
    state.apply_action(view.hand_size)
    state.apply_action(view.dealer)
    for k in range(n * view.hand_size):
        state.apply_action(to_openspiel_card(hands[k % n][k // n]))
    state.apply_action(to_openspiel_card(view.turned_card))
    for action in view.round_actions:
        state.apply_action(to_openspiel_action(action))
    return state


def _act(player: Any, game: BlackoutGame, state: Any) -> int:
    if getattr(player, "openspiel", False):
        return player.act_openspiel(state, game.view(game.current_player))
    return int(player.act(game.view(game.current_player)))


def _start_openspiel_hand(pyspiel: Any, game: BlackoutGame) -> Any:
    """The OpenSpiel state of the engine's current hand, just dealt: same dealer, hands and turned card."""
    n = game.num_players
    os_game = pyspiel.load_game("oh_hell", {"players": n, "num_tricks_fixed": game.hand_size})
    state = os_game.new_initial_state()
    state.apply_action(game.hand_size)  # the number of tricks (a single chance outcome when fixed)
    state.apply_action(game.dealer)
    hands = [sorted(hand) for hand in game.hands]
    for k in range(n * game.hand_size):  # OpenSpiel's k-th dealt card goes to player k % n
        state.apply_action(to_openspiel_card(hands[k % n][k // n]))
    state.apply_action(to_openspiel_card(game.turned_card))
    return state


def _decks(rng: np.random.Generator, rules: Rules, match: bool) -> list[list[int]]:
    """The deck orders of a deal: one per hand of a match, or only the first hand's (the others never played)."""
    played = rules.num_rounds if match else 1
    decks = rng.permuted(np.tile(np.arange(rules.deck_size), (played, 1)), axis=1).tolist()
    return decks + [list(range(rules.deck_size))] * (rules.num_rounds - played)


def play_deal(
    pyspiel: Any,
    rules: Rules,
    agent: Any,
    deal: int,
    seed: int,
    simulations: int,
    uct_c: float,
    match: bool,
    field: Any = None,
    redeal: bool = True,
    redeals: int = 1,
) -> dict[str, Any]:
    """Play deal ``deal`` once per seat of the agent; per rotation the scores, bids and timings.

    ``field`` plays the other seats (one player for all of them; default: OpenSpiel's IS-MCTS with
    ``simulations`` in all per decision, ``uct_c``, ``redeal`` and ``redeals``, :class:`OpenSpielPlayer`).
    """
    n = rules.num_players
    rng = np.random.default_rng([seed, deal])
    decks = _decks(rng, rules, match)
    start = 0
    first_dealer = int(rng.integers(n))
    rotations = []
    for seat in range(n):
        bot_seed = int(np.random.SeedSequence([seed, deal, seat]).generate_state(1)[0] % (2**31))
        others = field if field is not None else OpenSpielPlayer(pyspiel, simulations, uct_c, redeal=redeal, redeals=redeals)
        for player, player_seed in ((agent, bot_seed), (others, bot_seed)):
            if (player is agent) == getattr(player, "openspiel", False):
                # OpenSpiel's IS-MCTS in the agent's seat (the null test), or our policy in the other seats:
                # seeded apart from the other side (the default sides keep the seeds of the runs in docs/ismcts.md)
                stream = 1 if player is agent else 2
                player_seed = int(np.random.SeedSequence([seed, deal, seat, stream]).generate_state(1)[0] % (2**31))
            reseed = getattr(player, "seed", None)
            if callable(reseed):
                reseed(player_seed)
        game = BlackoutGame(rules, decks=decks, first_dealer=(first_dealer - start) % n, start_round=start)
        timing = {"agent": [0.0, 0], "openspiel": [0.0, 0]}
        while not game.is_over and (match or game.round_index == start):
            state = _start_openspiel_hand(pyspiel, game)
            round_index = game.round_index
            while game.round_index == round_index and not game.is_over:
                legal = game.legal_actions()
                theirs = sorted(from_openspiel_action(a) for a in state.legal_actions())
                if theirs != legal or state.current_player() != game.current_player:
                    raise RuntimeError(
                        f"the mirrored games disagree at deal {deal}: ours {game.current_player} {legal}, "
                        f"OpenSpiel's {state.current_player()} {theirs}"
                    )
                side = "agent" if game.current_player == seat else "openspiel"
                began = time.perf_counter()
                action = _act(agent if side == "agent" else others, game, state)
                if len(legal) > 1:
                    timing[side][0] += time.perf_counter() - began
                    timing[side][1] += 1
                game.step(action)
                state.apply_action(to_openspiel_action(action))
            if not state.is_terminal():
                raise RuntimeError(f"the mirrored games disagree at deal {deal}: OpenSpiel's hand is not over")
        rotations.append(
            {
                "seat": seat,
                "scores": [list(s) for s in game.round_scores],
                "bids": [list(b) for b in game.round_bids],
                "tricks": [list(t) for t in game.round_tricks],
                "timing": timing,
            }
        )
    return {"deal": deal, "rotations": rotations}


def speed(pyspiel: Any, spec: str, hands: int, seed: int, simulations: int, uct_c: float) -> dict[str, Any]:
    """CPU time per decision of agent ``spec`` and of OpenSpiel's IS-MCTS on the same decisions.

    ``hands`` single 10-card hands in which OpenSpiel's IS-MCTS plays every seat;
    at every decision with a choice our agent decides the same position too (its
    action is not played). Process CPU time (``time.process_time``), so waiting
    for a busy machine's cores does not count; both sides run in this process,
    alternately, under the same load. A network acts with torch on one thread,
    as in the games (``evaluate``'s workers): torch's default pool of threads
    made ``ppo+search`` 2-3x slower per decision on a loaded 2-core machine.
    """
    rules = Rules.preset("standard")  # its first hand: 10 cards
    agent = load_policy(spec, rules, seed)  # loads torch for a network, so the next line sees it
    with single_threaded_torch():
        return _speed(pyspiel, spec, agent, rules, hands, seed, simulations, uct_c)


def _speed(
    pyspiel: Any, spec: str, agent: Any, rules: Rules, hands: int, seed: int, simulations: int, uct_c: float
) -> dict[str, Any]:
    used = {"agent": 0.0, "openspiel": 0.0}
    decisions = 0
    for hand in range(hands):
        rng = np.random.default_rng([seed, hand])
        first_hand = rng.permutation(rules.deck_size).tolist()
        game = BlackoutGame(
            rules, decks=[first_hand] + [list(range(rules.deck_size))] * (rules.num_rounds - 1),
            first_dealer=int(rng.integers(4)),
        )
        state = _start_openspiel_hand(pyspiel, game)
        bot = pyspiel.ISMCTSBot(
            seed + hand, pyspiel.RandomRolloutEvaluator(1, seed + hand), uct_c, simulations, -1,
            pyspiel.ISMCTSFinalPolicyType.MAX_VISIT_COUNT, False, False,
        )
        while game.round_index == 0:
            legal = game.legal_actions()
            if len(legal) == 1:
                action = legal[0]
            else:
                began = time.process_time()
                action = from_openspiel_action(bot.step(state))
                used["openspiel"] += time.process_time() - began
                began = time.process_time()
                agent.act(game.view(game.current_player))
                used["agent"] += time.process_time() - began
                decisions += 1
            game.step(action)
            state.apply_action(to_openspiel_action(action))
    return {
        "agent": spec,
        "decisions": decisions,
        "agent_cpu_ms_per_decision": 1000 * used["agent"] / max(decisions, 1),
        "openspiel_cpu_ms_per_decision": 1000 * used["openspiel"] / max(decisions, 1),
        "ratio": used["agent"] / max(used["openspiel"], 1e-12),
    }


def _worker(task: tuple[str, Rules, int, int, int, float, bool, str | None, bool, int]) -> dict[str, Any]:
    spec, rules, deal, seed, simulations, uct_c, match, field_spec, redeal, redeals = task
    pyspiel = require_openspiel()
    players = []
    for key in (spec, field_spec):
        if key is None:
            players.append(None)
            continue
        player = _AGENTS.get((key, len(players)))
        if player is None:
            player = _AGENTS[(key, len(players))] = load_player(pyspiel, key, rules, seed)
        players.append(player)
    return play_deal(
        pyspiel, rules, players[0], deal, seed, simulations, uct_c, match, field=players[1], redeal=redeal, redeals=redeals
    )


_AGENTS: dict[tuple[str, int], Any] = {}


def summarise(spec: str, results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The figures of one agent over its deals (see the module docstring)."""
    diffs, agent_scores, field_scores = [], [], []
    made = {"agent": [0, 0], "openspiel": [0, 0]}
    timing = {"agent": [0.0, 0], "openspiel": [0.0, 0]}
    for result in results:
        deal_agent, deal_field, hands = 0.0, 0.0, 0
        for rotation in result["rotations"]:
            seat = rotation["seat"]
            for scores, bids, tricks in zip(rotation["scores"], rotation["bids"], rotation["tricks"]):
                others = [s for s in range(len(scores)) if s != seat]
                deal_agent += scores[seat]
                deal_field += sum(scores[s] for s in others) / len(others)
                hands += 1
                made["agent"][0] += bids[seat] == tricks[seat]
                made["agent"][1] += 1
                made["openspiel"][0] += sum(bids[s] == tricks[s] for s in others)
                made["openspiel"][1] += len(others)
            for side in timing:
                timing[side][0] += rotation["timing"][side][0]
                timing[side][1] += rotation["timing"][side][1]
        agent_scores.append(deal_agent / hands)
        field_scores.append(deal_field / hands)
        diffs.append((deal_agent - deal_field) / hands)
    half = confidence_half_width(diffs)
    mean = float(np.mean(diffs))
    return {
        "agent": spec,
        "deals": len(results),
        "agent_score_per_hand": float(np.mean(agent_scores)),
        "openspiel_score_per_hand": float(np.mean(field_scores)),
        "difference": mean,
        "interval": None if half is None else [mean - half, mean + half],
        "agent_bid_made_rate": made["agent"][0] / max(made["agent"][1], 1),
        "openspiel_bid_made_rate": made["openspiel"][0] / max(made["openspiel"][1], 1),
        "agent_ms_per_decision": 1000 * timing["agent"][0] / max(timing["agent"][1], 1),
        "openspiel_ms_per_decision": 1000 * timing["openspiel"][0] / max(timing["openspiel"][1], 1),
        "per_deal_differences": diffs,
    }


_SITTING_KEYS = ("simulations", "redeals", "uct_c", "match")
"""What every pooled sitting must share (with each row's agent and field)."""
_POOLED_MEANS = (
    "agent_score_per_hand", "openspiel_score_per_hand", "agent_bid_made_rate", "openspiel_bid_made_rate",
    "agent_ms_per_decision", "openspiel_ms_per_decision",
)
"""The per-deal figures of a row that pool as means weighted by deals."""


def pool_sittings(sittings: Sequence[tuple[str, Any]]) -> dict[str, Any]:
    """Sittings of the same agents against the same field, on other deals, as one: ``(file name, figures)`` each.

    The figures are what ``blackout bench openspiel_ismcts --json`` writes. The rows of one agent are pooled
    per deal: the difference and its 95% interval over all the sittings' per-deal differences, the per-hand
    scores and bid-made rates weighted by deals (every deal has the same hands), the times per decision too
    (an approximation: a deal's decisions vary a little). Raises ValueError naming the file when a sitting is
    not such figures, differs from the first in what it measured, or repeats another's deals.
    """
    if len(sittings) < 2:
        raise ValueError(f"--pool needs at least two sittings, got {len(sittings)}")
    first_name, first = sittings[0]
    pooled_rows: dict[str, list[dict[str, Any]]] = {}
    seen: dict[tuple[float, ...], str] = {}
    for name, figures in sittings:
        rows = figures.get("rows") if isinstance(figures, dict) else None
        if not isinstance(rows, list) or not rows or any(key not in figures for key in _SITTING_KEYS):
            raise ValueError(f"{name}: not the figures of a game run of blackout bench openspiel_ismcts --json")
        for key in _SITTING_KEYS:
            if figures[key] != first[key]:
                raise ValueError(f"{name}: {key} is {figures[key]!r}, {first_name} has {first[key]!r}: not one measurement")
        agents = [row.get("agent") for row in rows]
        if name != first_name and sorted(agents) != sorted(pooled_rows):
            raise ValueError(f"{name}: agents {agents}, {first_name} has {sorted(pooled_rows)}")
        for row in rows:
            missing = [key for key in (*_POOLED_MEANS, "deals", "per_deal_differences", "field") if key not in row]
            if missing or len(row["per_deal_differences"]) != row["deals"]:
                raise ValueError(f"{name}: a row without {missing or 'one difference per deal'}")
            earlier = pooled_rows.setdefault(row["agent"], [])
            if earlier and row["field"] != earlier[0]["field"]:
                raise ValueError(f"{name}: field {row['field']!r}, {first_name} has {earlier[0]['field']!r}")
            deals = tuple(row["per_deal_differences"])
            if (row["agent"], deals) in seen:
                raise ValueError(f"{name}: the same deals as {seen[(row['agent'], deals)]} (a sitting pooled twice?)")
            seen[(row["agent"], deals)] = name
            earlier.append(row)
    seeds = [figures.get("seed") for _, figures in sittings]
    if None not in seeds and len(set(seeds)) < len(seeds):
        raise ValueError(f"two sittings share a seed ({seeds}): the same deals would count twice")
    rows = []
    for agent, parts in pooled_rows.items():
        diffs = [d for row in parts for d in row["per_deal_differences"]]
        deals = sum(row["deals"] for row in parts)
        mean, half = float(np.mean(diffs)), confidence_half_width(diffs)
        row = {key: sum(r[key] * r["deals"] for r in parts) / deals for key in _POOLED_MEANS}
        row.update(agent=agent, deals=deals, difference=mean, per_deal_differences=diffs, field=parts[0]["field"],
                   interval=None if half is None else [mean - half, mean + half])
        rows.append(row)
    return {**{key: first[key] for key in _SITTING_KEYS}, "seeds": seeds, "files": [name for name, _ in sittings], "rows": rows}



def run_agent(
    spec: str, rules: Rules, deals: int, seed: int, simulations: int, uct_c: float, match: bool, workers: int = 1,
    field: str | None = None,
    redeal: bool = True,
    redeals: int = 1,
) -> dict[str, Any]:
    """Play ``deals`` duplicate deals of agent ``spec`` against OpenSpiel's IS-MCTS (or ``field``); its figures.

    ``redeal``: the default field searches from states rebuilt from its views; ``redeals`` K: from K such
    states per decision, ``simulations`` shared among them (:class:`OpenSpielPlayer`).
    """
    simulations_per_search(simulations, redeals)  # bad budgets fail here, before any game
    pyspiel = require_openspiel()
    for key in (spec, field):  # a bad spec fails here, before any game
        if key is not None:
            load_player(pyspiel, key, rules, seed)
    tasks = [(spec, rules, deal, seed, simulations, uct_c, match, field, redeal, redeals) for deal in range(deals)]
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            results = list(pool.map(_worker, tasks))
    else:
        results = [_worker(task) for task in tasks]
    row = summarise(spec, results)
    row["field"] = field or default_field(simulations, uct_c, redeal, redeals)
    return row


def default_field(simulations: int, uct_c: float, redeal: bool, redeals: int) -> str:
    """The spec of the field a sitting without ``--field`` plays: OpenSpiel's IS-MCTS at the bench's options."""
    redeals_option = f",redeals={redeals}" if redeals > 1 else ""
    return f"{OPENSPIEL_SPEC}:simulations={simulations},uct_c={uct_c:g},redeal={int(redeal)}{redeals_option}"


def table(rows: Sequence[dict[str, Any]], simulations: int, field: str | None = None, redeals: int = 1) -> str:
    other = "IS-MCTS" if field is None else "field"
    header = (
        f"{'agent':<28} {'deals':>5} {'agent/hand':>10} {other + '/hand':>12} {'difference [95% CI]':>26} "
        f"{'made':>6} {other + ' made':>12} {'ms/dec':>7} {other + ' ms/dec':>9}"
    )
    budget = f"{simulations} simulations" + (f": {redeals} redeals x {simulations // redeals}" if redeals > 1 else "")
    title = f"vs OpenSpiel IS-MCTS ({budget})" if field is None else f"vs {field} in the other seats"
    lines = [f"{title}, scored by our rules", header, "-" * len(header)]
    for r in rows:
        interval = "" if r["interval"] is None else f"[{r['interval'][0]:+.2f}, {r['interval'][1]:+.2f}]"
        lines.append(
            f"{r['agent']:<28} {r['deals']:>5} {r['agent_score_per_hand']:>10.2f} {r['openspiel_score_per_hand']:>12.2f} "
            f"{r['difference']:>+9.2f} {interval:>16} {r['agent_bid_made_rate']:>6.1%} "
            f"{r['openspiel_bid_made_rate']:>12.1%} {r['agent_ms_per_decision']:>7.1f} {r['openspiel_ms_per_decision']:>9.1f}"
        )
    return "\n".join(lines)
