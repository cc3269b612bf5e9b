"""The read-only Ladder page of ``blackout serve --ladder FILE``: the leaderboard of one ladder file, from the file.

:func:`ladder_routes` gives two routes for the server's app: ``/ladder`` (the leaderboard as
an HTML page with no script and no asset from elsewhere) and ``/ladder.json`` (the same data
as ``blackout ladder export`` writes). The file is named when the server starts and checked
then (a file that is not a ladder stops the server before it listens); a browser never names
a file. Each request opens the file read-only, so the page shows a ladder that a ``blackout
ladder run`` is still filling, as of that request, and never writes to it.
"""

from __future__ import annotations

import html
import os
from pathlib import Path
from typing import Any

from starlette.responses import HTMLResponse, JSONResponse
from starlette.routing import Route

from ..evaluation.ladder import LadderError, obvious_text, open_ladder

__all__ = ["ladder_routes", "render_ladder"]


def render_ladder(path: str | os.PathLike[str]) -> str:
    """The Ladder page's HTML for the ladder file at ``path`` (every text from the file escaped)."""
    with open_ladder(path, read_only=True) as ladder:
        data = ladder.to_dict()
        standings = ladder.standings()
        pairs = ladder.pairwise()
    e = html.escape
    n = data["rules"]["num_players"]
    rows = []
    for s in standings:
        score = "-" if s.hands == 0 else f"{s.score_per_hand:.2f} ± {_half(s.score_ci95)}"
        margin = "-" if s.hands == 0 else f"{s.margin_per_hand:+.2f} ± {_half(s.margin_ci95)}"
        made = "-" if s.hands == 0 else f"{s.bid_made_rate:.1%}"
        obvious = obvious_text(s.obvious)
        rows.append(
            f"<tr><td>{s.rank}</td><td><code>{e(s.name)}</code></td><td>{s.conservative:.2f}</td><td>{s.mu:.2f}</td>"
            f"<td>{s.sigma:.2f}</td><td>{s.games}</td><td>{score}</td><td>{margin}</td><td>{made}</td><td>{obvious}</td></tr>"
        )
    pair_rows = [
        f"<tr><td><code>{e(p['a'])}</code></td><td><code>{e(p['b'])}</code></td><td>{p['deals']}</td>"
        f"<td>{p['difference']:+.2f} ± {_half(p['ci95'])}</td></tr>"
        for p in pairs
    ]
    pair_table = (
        f"<h2>One agent against {n - 1} copies of another</h2><table><tr><th>agent</th><th>against</th><th>deals</th>"
        f"<th>difference per hand (95% CI)</th></tr>{''.join(pair_rows)}</table>"
        if pair_rows else ""
    )
    title = f"Ladder: {e(Path(path).name)}"
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{title}</title><style>body{{font-family:sans-serif;margin:2em}}td,th{{padding:.2em .8em;"
        "text-align:right}}td:nth-child(2),th:nth-child(2){text-align:left}table{border-collapse:collapse}"
        "tr:nth-child(even){background:#f3f3f3}</style></head><body>"
        f"<h1>{title}</h1><p>{len(standings)} agents, tables of {n}: {data['tables']} tables x {data['deals']} deals x "
        f"{n} rotations ({'single hands' if data['hands_only'] else 'whole matches'}, seed {data['seed']}), "
        f"{data['games']} games. Ranked by the conservative rating mu - 3 sigma (Plackett-Luce).</p>"
        "<table><tr><th>rank</th><th>agent</th><th>mu - 3 sigma</th><th>mu</th><th>sigma</th><th>games</th>"
        "<th>score/hand (95% CI)</th><th>vs table (95% CI)</th><th>bid made</th><th>obvious moves</th></tr>"
        f"{''.join(rows)}</table>{pair_table}<p><a href='/ladder.json'>JSON</a></p></body></html>"
    )


def _half(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def ladder_routes(path: str | os.PathLike[str]) -> list[Route]:
    """``/ladder`` and ``/ladder.json`` for the ladder file at ``path`` (LadderError now if it is not one)."""
    path = Path(path)
    with open_ladder(path, read_only=True):
        pass

    async def page(request: Any) -> HTMLResponse:
        try:
            return HTMLResponse(render_ladder(path), headers={"Cache-Control": "no-cache"})
        except LadderError as error:  # the file was replaced or damaged since the server started
            return HTMLResponse(f"<p>{html.escape(str(error))}</p>", status_code=503)

    async def data(request: Any) -> JSONResponse:
        try:
            with open_ladder(path, read_only=True) as ladder:
                return JSONResponse(ladder.to_dict(), headers={"Cache-Control": "no-cache"})
        except LadderError as error:
            return JSONResponse({"error": str(error)}, status_code=503)

    return [Route("/ladder", page), Route("/ladder.json", data)]
