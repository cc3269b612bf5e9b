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


def _header(view: PlayerView) -> list[str]:
    rules = view.rules
    status = PHASE_WORDS[view.phase]
    if view.current_player is not None:
        status += f", {seat_name(view.current_player)} to act"
    return [
        f"Round {view.round_index + 1}/{rules.num_rounds}  hand of {view.hand_size}  "
        f"dealer {seat_name(view.dealer)}  {_trump_words(view)}",
        f"{status}; tricks left {view.tricks_left}",
    ]


SEAT_COLUMNS = ("seat", "bid", "tricks", "score", "")


def _seat_rows(view: PlayerView) -> list[tuple[str, str, str, str, str]]:
    """One row per seat: name with marks (* viewer, D dealer), bid, tricks, score, b/o."""
    impossible = view.bid_impossible
    rows = []
    for seat in range(view.rules.num_players):
        bid = view.bids[seat]
        marks = ("*" if seat == view.player else "") + ("D" if seat == view.dealer else "")
        rows.append(
            (
                f"{seat_name(seat)} {marks}".rstrip(),
                "-" if bid is None else str(bid),
                str(view.tricks_won[seat]),
                str(view.scores[seat]),
                "b/o" if impossible[seat] else "",
            )
        )
    return rows


def _trick_lines(view: PlayerView) -> list[str]:
    bids_total = sum(b for b in view.bids if b is not None)
    led = "none yet" if view.led_suit is None else SUIT_NAMES[view.led_suit]
    lines = [
        f"bids total {bids_total} of {view.hand_size} tricks  (* viewer, D dealer, b/o bid out of reach)",
        "",
        f"current trick (led: {led}): {_trick(view.current_trick) or '-'}",
    ]
    if view.last_trick:
        lines.append(f"last trick: {_trick(view.last_trick)}  -> won by {seat_name(view.last_trick_winner)}")
    else:
        lines.append("last trick: -")
    return lines


def table_lines(view: PlayerView, hands: Sequence[Sequence[int]] | None = None) -> list[str]:
    """The text table as a list of lines (see :func:`render_text`)."""
    lines = _header(view) + [""]
    for row in [SEAT_COLUMNS, *_seat_rows(view)]:
        lines.append(f"{row[0]:<12}{row[1]:>4}{row[2]:>8}{row[3]:>8}" + (f"  {row[4]}" if row[4] else ""))
    lines += _trick_lines(view) + [""]
    if hands is None:
        lines.append(f"hand of {seat_name(view.player)}: {_cards(view.hand, view.trump)}")
    else:
        for seat in range(view.rules.num_players):
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
    header, seat_rows, trick_lines = _header(view), [SEAT_COLUMNS, *_seat_rows(view)], _trick_lines(view)
    # (title, cards, a label under each card or None)
    rows_of_cards = [("current trick", [card for _, card in view.current_trick], [f"p{s}" for s, _ in view.current_trick])]
    if hands is None:
        rows_of_cards.append((f"hand of {seat_name(view.player)}", sort_hand(view.hand, view.trump), None))
    else:
        rows_of_cards += [(f"hand of {seat_name(s)}", sort_hand(h, view.trump), None) for s, h in enumerate(hands)]
    text_rows = len(header) + 1 + len(seat_rows) + len(trick_lines)
    height = _MARGIN * 2 + _LINE * text_rows + len(rows_of_cards) * (_CARD_H + _LINE + 10)
    # The size depends only on the rules, so every frame of a video has the same shape.
    width = max(_WIDTH, 2 * _MARGIN + max(view.rules.hand_sizes + (view.rules.num_players,)) * (_CARD_W + 4))
    image = Image.new("RGB", (width, height), _FELT)
    draw = ImageDraw.Draw(image)
    y = _MARGIN
    for line in header:
        draw.text((_MARGIN, y), line, fill=_INK, font=text_font)
        y += _LINE
    y += _LINE
    # Columns at fixed places: the default font is proportional, so text padding would not line up.
    right_edges = (None, 150, 210, 270, None)
    for row in seat_rows:
        draw.text((_MARGIN, y), row[0], fill=_INK, font=text_font)
        for text, right in zip(row[1:4], right_edges[1:4]):
            draw.text((_MARGIN + right - draw.textlength(text, font=text_font), y), text, fill=_INK, font=text_font)
        if row[4]:
            draw.text((_MARGIN + 285, y), row[4], fill=(255, 190, 90), font=text_font)
        y += _LINE
    for line in trick_lines:
        draw.text((_MARGIN, y), line, fill=_INK, font=text_font)
        y += _LINE
    small_font = _font(11)
    for title, cards, labels in rows_of_cards:
        draw.text((_MARGIN, y), title, fill=_INK, font=text_font)
        y += _LINE
        for k, card in enumerate(cards):
            x = _MARGIN + k * (_CARD_W + 4)
            _draw_card(draw, x, y, card, card_font)
            if labels:
                draw.text((x + 5, y + _CARD_H - 16), labels[k], fill=(90, 90, 90), font=small_font)
        y += _CARD_H + 10
    return np.asarray(image, dtype=np.uint8)
