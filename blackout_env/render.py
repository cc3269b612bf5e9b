"""Drawing the table: a text table (``ansi``/``human``) and an image (``rgb_array``).

Both draw from a :class:`PlayerView`, so they show what that player may know:
trump and the turned card, each seat's bid, tricks and score (``b/o`` once a
bid can no longer be made), the current trick with the led suit, the last
trick and the viewer's hand. Pass ``hands`` (every seat's cards) for a
spectator's picture with all hands face up.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .cards import SUIT_NAMES, card_to_str, is_joker, sort_hand, suit_of
from .view import PlayerView

__all__ = ["render_text", "render_image", "seat_name"]

PHASE_WORDS = {"bid": "bidding", "play": "playing", "game_over": "game over"}


def seat_name(seat: int) -> str:
    """The agent name of a seat, as the environments use it: ``player_3``."""
    return f"player_{seat}"


def _cards(cards: Sequence[int], trump: int | None = None) -> str:
    return " ".join(card_to_str(c) for c in sort_hand(cards, trump)) or "-"


def _trick(trick: Sequence[tuple[int, int]]) -> str:
    return "  ".join(f"{seat_name(seat)} {card_to_str(card)}" for seat, card in trick)


def _trump_words(view: PlayerView) -> str:
    trump = "no trump" if view.trump is None else SUIT_NAMES[view.trump]
    if view.turned_card is None:
        return f"trump: {trump}"
    how = "dealer's last card shown" if view.turned_card_held_by_dealer else "turned"
    return f"trump: {trump} ({how}: {card_to_str(view.turned_card)})"


def table_lines(view: PlayerView, hands: Sequence[Sequence[int]] | None = None) -> list[str]:
    """The text table as a list of lines (see :func:`render_text`)."""
    rules = view.rules
    n = rules.num_players
    status = PHASE_WORDS[view.phase]
    if view.current_player is not None:
        status += f", {seat_name(view.current_player)} to act"
    lines = [
        f"Round {view.round_index + 1}/{rules.num_rounds}  hand of {view.hand_size}  "
        f"dealer {seat_name(view.dealer)}  {_trump_words(view)}",
        f"{status}; tricks left {view.tricks_left}",
        "",
        f"{'seat':<12}{'bid':>4}{'tricks':>8}{'score':>8}",
    ]
    impossible = view.bid_impossible
    bids_total = 0
    for seat in range(n):
        bid = view.bids[seat]
        bids_total += bid or 0
        marks = ("*" if seat == view.player else " ") + ("D" if seat == view.dealer else " ")
        lines.append(
            f"{seat_name(seat) + ' ' + marks:<12}{'-' if bid is None else bid:>4}{view.tricks_won[seat]:>8}"
            f"{view.scores[seat]:>8}" + ("  b/o" if impossible[seat] else "")
        )
    lines.append(f"bids total {bids_total} of {view.hand_size} tricks  (* viewer, D dealer, b/o bid out of reach)")
    lines.append("")
    led = "none yet" if view.led_suit is None else SUIT_NAMES[view.led_suit]
    lines.append(f"current trick (led: {led}): {_trick(view.current_trick) or '-'}")
    if view.last_trick:
        winner = view.last_trick_winner
        lines.append(f"last trick: {_trick(view.last_trick)}  -> won by {seat_name(winner)}")
    else:
        lines.append("last trick: -")
    lines.append("")
    if hands is None:
        lines.append(f"hand of {seat_name(view.player)}: {_cards(view.hand, view.trump)}")
    else:
        for seat in range(n):
            lines.append(f"hand of {seat_name(seat)}: {_cards(hands[seat], view.trump)}")
    return lines


def render_text(view: PlayerView, hands: Sequence[Sequence[int]] | None = None) -> str:
    """The table as readable text, seen by ``view.player`` (or by a spectator when ``hands`` is given)."""
    return "\n".join(table_lines(view, hands)) + "\n"


# ------------------------------------------------------------------ image
_WIDTH, _LINE, _MARGIN = 760, 18, 14
_CARD_W, _CARD_H = 38, 52
_FELT = (20, 90, 50)
_INK = (240, 240, 230)
_RED = (200, 30, 30)
_BLACK = (20, 20, 20)


def _font(size: int):
    from PIL import ImageFont

    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1 has one bitmap font size
        return ImageFont.load_default()


def _draw_card(draw, x: int, y: int, card: int, font) -> None:
    draw.rounded_rectangle((x, y, x + _CARD_W, y + _CARD_H), radius=5, fill=(250, 250, 245), outline=_BLACK)
    colour = _RED if is_joker(card) or suit_of(card) in (1, 2) else _BLACK
    draw.text((x + 5, y + 5), card_to_str(card), fill=colour, font=font)


def render_image(view: PlayerView, hands: Sequence[Sequence[int]] | None = None) -> np.ndarray:
    """The table as an RGB image (``uint8`` array of shape (height, width, 3)) for videos.

    The text table on top, then the current trick and the hand(s) as cards.
    """
    from PIL import Image, ImageDraw

    text_font = _font(14)
    card_font = _font(15)
    lines = table_lines(view, hands=None)
    rows_of_cards = [("current trick", [card for _, card in view.current_trick])]
    if hands is None:
        rows_of_cards.append((f"hand of {seat_name(view.player)}", sort_hand(view.hand, view.trump)))
    else:
        rows_of_cards += [(f"hand of {seat_name(s)}", sort_hand(h, view.trump)) for s, h in enumerate(hands)]
    # Hand lines are drawn as cards, not text.
    lines = [line for line in lines if not line.startswith("hand of ")]
    height = _MARGIN * 2 + _LINE * len(lines) + len(rows_of_cards) * (_CARD_H + _LINE + 10)
    # The size depends only on the rules, so every frame of a video has the same shape.
    width = max(_WIDTH, 2 * _MARGIN + max(view.rules.hand_sizes + (view.rules.num_players,)) * (_CARD_W + 4))
    image = Image.new("RGB", (width, height), _FELT)
    draw = ImageDraw.Draw(image)
    y = _MARGIN
    for line in lines:
        draw.text((_MARGIN, y), line, fill=_INK, font=text_font)
        y += _LINE
    for title, cards in rows_of_cards:
        draw.text((_MARGIN, y), title, fill=_INK, font=text_font)
        y += _LINE
        for k, card in enumerate(cards):
            _draw_card(draw, _MARGIN + k * (_CARD_W + 4), y, card, card_font)
        y += _CARD_H + 10
    return np.asarray(image, dtype=np.uint8)
