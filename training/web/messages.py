"""What ``blackout serve`` sends: the ``state`` message of a table as one connection may see it.

Everything here is a pure function of the engine, a seat's view and the
connection's settings, and every rule fact in a message (legal cards and why
the others are not, the forbidden bid and its reason, the suggestion, the b/o
mark, the trumped-in card) comes from the engine, its views or the terminal's
words for them (:mod:`blackout_training.play.screen`): the page only draws.

Hidden cards: a connection sees its own seat's view. Other hands are added
only when :func:`visible_hands` allows it (every hand in the replay viewer and
once the match is over; a spectator's "reveal" at a table where no person
plays). A bot's reasons (``why``) name the bot's own cards, so they go only to
a connection that may see that bot's hand; a person's reasons are the
suggestion for their own view. The protocol is documented in docs/web.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from blackout_env import BlackoutGame, PlayerView, Rules
from blackout_env.agents.policies import Explanation
from blackout_env.game.cards import RANKS, SUIT_NAMES, SUIT_SYMBOLS, card_to_str, rank_of, sort_hand, suit_of
from blackout_env.game.rules_logic import dealer_of_round

from ..play import screen
from .table import Table, public_spec

__all__ = ["Viewer", "card", "game_state", "state_message", "visible_hands"]

MAX_EVENTS = 12
"""How many lines of narration a state carries (the page keeps its own longer log)."""


@dataclass
class Viewer:
    """One connection's place at a table and its settings."""

    seat: int | None = None
    """The seat it holds, or None for a spectator."""
    host: bool = False
    why: bool = False
    reveal: bool = False


def card(card_id: int) -> dict[str, Any]:
    """A card as every message shows it: ``{"card": 51, "text": "AS", "rank": "A", "suit": 3, "symbol": "♠"}``."""
    suit = suit_of(card_id)
    rank = rank_of(card_id)
    return {
        "card": int(card_id),
        "text": card_to_str(card_id),
        "rank": "JK" if rank is None else RANKS[rank],
        "suit": suit,
        "symbol": "🃏" if suit is None else SUIT_SYMBOLS[suit],
    }


def _suit(suit: int | None) -> dict[str, Any]:
    if suit is None:
        return {"suit": None, "name": "no trump", "symbol": ""}
    return {"suit": suit, "name": SUIT_NAMES[suit], "symbol": SUIT_SYMBOLS[suit]}


def visible_hands(game: BlackoutGame, has_people: bool, viewer: Viewer) -> set[int]:
    """The seats whose hidden cards this connection may see at a table (its own seat's are always in its view;
    the replay viewer shows every hand)."""
    if game.is_over or (viewer.reveal and not has_people):
        return set(range(game.num_players))
    return set() if viewer.seat is None else {viewer.seat}


def _action_label(action: int, num_cards: int) -> dict[str, Any]:
    if action >= num_cards:
        return {"action": action, "label": f"bid {action - num_cards}", "card": None}
    return {"action": action, "label": card_to_str(action), "card": card(action)}


def explanation(why: Explanation, seat: int, policy: str, phase: str, num_cards: int) -> dict[str, Any]:
    """A policy's reasons (:func:`blackout_env.agents.policies.explain`) as the ``why`` of a state."""
    actions = []
    for reason in why.actions:
        entry = _action_label(reason.action, num_cards)
        entry.update(probability=reason.probability, value=reason.value, visits=reason.visits,
                     chosen=reason.action == why.action)
        actions.append(entry)
    return {"seat": seat, "policy": policy, "phase": phase, "kind": why.kind, "value": why.value,
            "actions": actions, "note": why.note, "chosen": _action_label(why.action, num_cards)}


def _score_sheet(game: BlackoutGame, view: PlayerView) -> dict[str, Any]:
    n = game.num_players
    rows = []
    for offset, (bids, tricks, points) in enumerate(zip(game.round_bids, game.round_tricks, game.round_scores)):
        round_index = game.start_round + offset
        rows.append({
            "round": round_index,
            "cards": game.rules.hand_sizes[round_index],
            "dealer": dealer_of_round(game.first_dealer, round_index, n),
            "cells": [{"bid": bids[s], "taken": tricks[s], "points": points[s], "made": bids[s] == tricks[s]}
                      for s in range(n)],
        })
    current = None
    if not game.is_over:
        impossible = view.bid_impossible
        current = {
            "round": game.round_index,
            "cards": game.hand_size,
            "dealer": game.dealer,
            "cells": [{"bid": view.bids[s], "taken": view.tricks_won[s], "impossible": impossible[s]}
                      for s in range(n)],
        }
    return {"rows": rows, "current": current, "totals": list(game.scores)}


def _events(game: BlackoutGame, names: list[str]) -> list[dict[str, Any]]:
    """The last lines of narration (never a hand: the deal event's hands are left out)."""
    events = []
    for event in game.history[-MAX_EVENTS * 2:]:
        kind = event[0]
        if kind == "game_over":
            text = "Game over: " + ", ".join(names[s] for s in event[1]) + (" win" if len(event[1]) > 1 else " wins")
        else:
            text = screen.describe_event(event, names)
        seat = {"bid": 1, "play": 1, "trick": 1, "deal": 2}.get(kind)
        events.append({"kind": kind, "seat": None if seat is None else int(event[seat]), "text": text})
    return events[-MAX_EVENTS:]


def _last_trick(game: BlackoutGame) -> dict[str, Any] | None:
    for event in reversed(game.history):
        if event[0] == "trick":
            return {"winner": event[1], "plays": [{"seat": s, "card": card(c)} for s, c in event[2]]}
    return None


def game_state(
    game: BlackoutGame,
    names: list[str],
    viewer: Viewer,
    visible: set[int],
    suggestion: tuple[int, Explanation] | None = None,
) -> dict[str, Any]:
    """The game part of a ``state`` message: the table, the viewer's hand and choices, the score sheet."""
    n = game.num_players
    seat = viewer.seat
    view = game.view(seat if seat is not None else (game.current_player if game.current_player is not None else 0))
    own = seat is not None
    your_turn = own and not game.is_over and game.current_player == seat
    impossible = view.bid_impossible
    seats = []
    for s in range(n):
        hand = None
        if s in visible and s != seat:
            hand = [card(c) for c in sort_hand(game.hands[s], game.trump)]
        seats.append({
            "seat": s,
            "name": names[s],
            "bid": view.bids[s],
            "tricks_won": view.tricks_won[s],
            "score": view.scores[s],
            "bid_impossible": impossible[s],
            "dealer": s == view.dealer,
            "to_act": s == game.current_player,
            "cards_left": view.cards_left(s),
            "hand": hand,
        })
    hand = []
    if own:
        for c in screen.hand_order(view):
            entry = card(c)
            entry["legal"] = your_turn and view.phase == "play" and c in view.legal_actions
            if your_turn and view.phase == "play" and not entry["legal"]:
                entry["reason"] = screen.explain_illegal_card(view, c)
            hand.append(entry)
    bidding = None
    if your_turn and view.phase == "bid":
        forbidden = view.forbidden_bid
        suggested = None if suggestion is None else suggestion[0]
        bidding = {
            "options": [{"bid": k, "action": view.num_cards + k, "forbidden": k == forbidden,
                         "suggested": k == suggested} for k in range(view.hand_size + 1)],
            "forbidden_reason": screen.forbidden_bid_reason(view),
            "suggestion": suggested,
        }
    made = [b for b in view.bids if b is not None]
    trick = [{"seat": s, "card": card(c), "trumped_in": screen.trumped_in(view, c)} for s, c in view.current_trick]
    return {
        "move": len(game.actions),
        "round": game.round_index,
        "num_rounds": game.num_rounds,
        "hand_size": view.hand_size,
        "phase": view.phase,
        "dealer": view.dealer,
        "current_player": game.current_player,
        "trump": _suit(view.trump),
        "turned_card": None if view.turned_card is None else card(view.turned_card),
        "turned_by_dealer": view.turned_card_held_by_dealer,
        "trick_number": min(sum(view.tricks_won) + 1, view.hand_size),
        "leader": view.leader,
        "led_suit": None if not view.current_trick or view.led_suit is None else _suit(view.led_suit),
        "trick": trick,
        "last_trick": _last_trick(game),
        "seats": seats,
        "bid_total": {"bids": sum(made), "seats_bid": len(made), "tricks": view.hand_size,
                      "text": screen.bid_total_line(view)},
        "hand": hand,
        "your_turn": your_turn,
        "bidding": bidding,
        "score_sheet": _score_sheet(game, view),
        "winners": game.winners() if game.is_over else None,
        "events": _events(game, names),
    }


def state_message(table: Table, viewer: Viewer, away: set[int] | None = None,
                  waiting: dict[str, Any] | None = None) -> dict[str, Any]:
    """The ``state`` message of ``table`` for one connection (see docs/web.md for every field)."""
    game = table.game
    visible = visible_hands(game, table.has_people, viewer)
    names = [seat.name for seat in table.seats]
    suggestion = None
    seat = viewer.seat
    if seat is not None and table.status == "playing" and game.current_player == seat and game.phase == "bid":
        suggestion = table.suggestion(game.view(seat))
    state = game_state(game, names, viewer, visible, suggestion)
    if table.status == "lobby":  # the deal is done, but nobody acts before the host starts the game
        state.update(your_turn=False, bidding=None)
    for entry, web_seat in zip(state["seats"], table.seats):
        entry["kind"] = web_seat.kind
        entry["policy"] = None if web_seat.policy is None else public_spec(web_seat.policy)
        entry["connected"] = web_seat.kind == "bot" or (away is not None and entry["seat"] not in away)
    why = None
    if viewer.why:
        if suggestion is not None:
            why = explanation(suggestion[1], seat, "suggestion (heuristic)", "bid", game.num_cards)
        else:
            # The newest bot decision whose hand this connection may see.
            seen = [(move, actor, why) for actor, (move, why) in table.last_why.items() if actor in visible]
            if seen:
                _, actor, decided = max(seen, key=lambda item: item[0])
                why = explanation(decided, actor, public_spec(table.seats[actor].policy or table.fill),
                                  "bid" if decided.action >= game.num_cards else "play", game.num_cards)
    mode = "play" if table.has_people else "watch"
    state.update(
        type="state",
        table=table.table_id,
        mode=mode,
        status="waiting" if waiting and table.status == "playing" else table.status,
        you=seat,
        host=viewer.host,
        rules=rules_summary(table.game.rules, table.rules_name),
        why=why,
        waiting=waiting,
        paused=table.paused,
        bot_delay_ms=table.bot_delay_ms,
        reveal=viewer.reveal and not table.has_people,
        can_reveal=not table.has_people or game.is_over,
        takeover_s=table.takeover_s,
        lobby_open=table.lobby_open,
        replay=None,
        # (where people play it would tell them when a bot had one legal card: it answers at once)
        decision_ms=table.last_decision_ms if not table.has_people or game.is_over else None,
    )
    return state


def rules_summary(rules: Rules, name: str) -> dict[str, Any]:
    """The ``rules`` of a state: the name the table was created with, and the rules in one line."""
    return {
        "name": name,
        "num_players": rules.num_players,
        "hand_sizes": list(rules.hand_sizes),
        "hook": rules.hook,
        "num_cards": rules.num_cards,
        "summary": rules.describe().replace("\n", "; "),
    }
