"""The page of ``blackout serve`` in a real browser: Debian's chromium, headless, driven by selenium.

A real uvicorn server runs in a thread on a free loopback port (bots without delay); the test plays a
short match by clicking the toolbar, the bid buttons and the cards, reloads mid-hand, opens the score
sheet, plays to the end, replays the game, watches four bots with their reasons, and looks at the page
on a phone-sized screen.

Screenshots go to pytest's tmp_path, or to docs/images (the docs embed them) when
``BLACKOUT_SCREENSHOTS=1``. Without chromium and chromedriver the test is skipped, except under CI
(``CI`` set), which installs them.
"""

from __future__ import annotations

import importlib.util
import io
import os
import socket
import threading
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
uvicorn = pytest.importorskip("uvicorn")

# Debian's packages (apt-get install chromium chromium-driver); both paths are given to selenium, so
# selenium-manager never downloads a browser. BLACKOUT_CHROMIUM / BLACKOUT_CHROMEDRIVER name others.
CHROMIUM = Path(os.environ.get("BLACKOUT_CHROMIUM", "/usr/bin/chromium"))
CHROMEDRIVER = Path(os.environ.get("BLACKOUT_CHROMEDRIVER", "/usr/bin/chromedriver"))
DOCS_IMAGES = Path(__file__).resolve().parents[1] / "docs" / "images"

# Seed 39 of the "short" rules (hands 1-2-3-2-1, 4 players, you in seat 0 and three heuristic bots),
# when you always bid the first permitted bid and play the first legal card of your sorted hand: you
# deal hand 1 after the three bots bid 0, so bidding 1 is forbidden (dealer's hook) and 0 is suggested;
# in hand 3 a bot trumps in before your turn (move 30); bids are missed (b/o) from hand 1 on; in hand 4's
# second trick two bids can no longer be made (the sad-face mark); you win.
# Found by replaying seeds 0-59 with the engine and the same choices (Table.decide for the bots).
SEED = 39
pytestmark = [pytest.mark.browser, pytest.mark.filterwarnings("ignore::DeprecationWarning")]


def _require_browser() -> None:
    missing = [str(path) for path in (CHROMIUM, CHROMEDRIVER) if not path.exists()]
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("selenium (the dev extra)")
    if missing:
        message = f"the browser test needs {', '.join(missing)}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    """The app (its server's tables are read by the tests) and its URL."""
    _require_browser()
    from blackout_training.web.server import create_app

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    app = create_app(tmp_path_factory.mktemp("saves"), bot_delay_ms=0)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    yield app, f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)


@pytest.fixture(scope="module")
def base_url(served) -> str:
    return served[1]


def _chromium() -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = str(CHROMIUM)
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,800",
                     "--disable-extensions", "--no-first-run", "--disable-dev-shm-usage",
                     "--disable-background-networking", "--disable-component-update", "--disable-sync"):
        options.add_argument(argument)
    driver = webdriver.Chrome(options=options, service=Service(str(CHROMEDRIVER)))
    driver.set_script_timeout(20)
    return driver


@pytest.fixture(scope="module")
def browser(base_url: str):
    driver = _chromium()
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def second_browser(base_url: str):
    """Another person's browser: its own profile, so its own storage and seat tokens."""
    driver = _chromium()
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if os.environ.get("BLACKOUT_SCREENSHOTS") == "1":
        DOCS_IMAGES.mkdir(parents=True, exist_ok=True)
        return DOCS_IMAGES
    return tmp_path_factory.mktemp("screenshots")


# ------------------------------------------------------------------------- helpers
def viewport(driver: Any, width: int, height: int, mobile: bool = False) -> None:
    """The page's exact size (the window's includes what a headless browser keeps for its frame)."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})


def screenshot(driver: Any, path: Path) -> None:
    """A PNG of the page in at most 256 colours (the docs embed them: they stay small)."""
    from PIL import Image

    image = Image.open(io.BytesIO(driver.get_screenshot_as_png())).convert("RGB")
    image.quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)
    assert path.stat().st_size < 200_000, f"{path.name} weighs {path.stat().st_size} bytes"


def page(driver: Any) -> dict[str, Any]:
    """What the page drew last (body's data attributes)."""
    return driver.execute_script("return Object.assign({}, document.body.dataset)")


def wait(driver: Any, script: str, *args: Any, timeout: float = 20) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.05).until(lambda d: d.execute_script(script, *args))


def wait_for_me(driver: Any, after_move: int) -> dict[str, Any]:
    """Until it is my turn after ``after_move`` actions, or the game is over."""
    wait(driver, "const b = document.body.dataset; return b.move !== '' && Number(b.move) > arguments[0]"
                 " && (b.yourTurn === 'true' || b.status === 'over')", after_move)
    return page(driver)


def css(driver: Any, selector: str) -> list[Any]:
    from selenium.webdriver.common.by import By

    return driver.find_elements(By.CSS_SELECTOR, selector)


def one(driver: Any, selector: str) -> Any:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.CSS_SELECTOR, selector)


def click_first(driver: Any, selector: str, tries: int = 3) -> None:
    """Click the first element matching ``selector``, found afresh if a re-render replaced it under the click."""
    from selenium.common.exceptions import StaleElementReferenceException

    for attempt in range(tries):
        try:
            one(driver, selector).click()
            return
        except StaleElementReferenceException:
            if attempt == tries - 1:
                raise


def new_game(driver: Any, mode: str, rules: str, seats: list[str], seed: int, delay_ms: int = 0) -> None:
    """Start a game from the toolbar's New game dialog."""
    from selenium.webdriver.support.ui import Select

    # The page has settled: a stored game is back, or (nothing stored) the dialog opened by itself.
    wait(driver, "return document.querySelector('#new-game-dialog').open || document.body.dataset.mode !== 'none'")
    if not one(driver, "#new-game-dialog").get_attribute("open"):
        one(driver, "#new-game").click()
    wait(driver, "return document.querySelector('#new-game-dialog').open")
    one(driver, f"#ng-mode-{mode}").click()
    Select(one(driver, "#ng-rules")).select_by_value(rules)
    Select(one(driver, "#ng-players")).select_by_value(str(len(seats)))
    for index, spec in enumerate(seats):
        if spec != "you":
            Select(one(driver, f"#ng-seat-{index}")).select_by_value(spec)
    for field, value in (("#ng-seed", seed), ("#ng-delay", delay_ms)):
        one(driver, field).clear()
        one(driver, field).send_keys(str(value))
    one(driver, "#ng-start").click()
    wait(driver, "return !document.querySelector('#new-game-dialog').open")


def hand_cards(driver: Any) -> list[str]:
    return driver.execute_script("return [...document.querySelectorAll('#hand button.card')].map(b => b.dataset.card)")


def drawn_box(driver: Any, element: Any) -> tuple[float, float]:
    """The width and height an element is drawn at (0, 0 when it is not drawn)."""
    return tuple(driver.execute_script("const r = arguments[0].getBoundingClientRect(); return [r.width, r.height]",
                                       element))


def assert_mark_drawn(driver: Any, selector: str) -> None:
    """An inline-SVG mark is in the page and drawn with a size (it needs no font, emoji or other)."""
    marks = css(driver, selector)
    assert marks, f"no {selector} in the page"
    for mark in marks:
        assert mark.tag_name == "svg"
        width, height = drawn_box(driver, mark)
        assert width > 4 and height > 4, f"{selector} is drawn {width} x {height}"


def cards_in_page(driver: Any) -> tuple[int, set[int]]:
    """The move the page drew last, and every card its DOM names anywhere (shown or not), read at once."""
    move, cards = driver.execute_script(
        "return [Number(document.body.dataset.move), [...document.querySelectorAll('[data-card]')].map(e => e.dataset.card)]")
    return move, {int(c) for c in cards}


def knowable_cards(game: Any, move: int, seat: int | None) -> set[int]:
    """What ``seat`` may know after ``move`` actions of ``game``: its hand then, and every card shown to all."""
    from blackout_env import BlackoutGame

    replayed = BlackoutGame(game.rules, decks=game.decks, first_dealer=game.first_dealer)
    for action in game.actions[:move]:
        replayed.step(action)
    known = {event[2] for event in replayed.history if event[0] == "play"}
    known |= {event[4] for event in replayed.history if event[0] == "deal" and event[4] is not None}
    return known | (set(replayed.hands[seat]) if seat is not None else set())


# --------------------------------------------------------------------------- tests
def test_a_short_match_by_clicks_survives_a_reload_and_ends_at_game_over(browser, base_url, shots, tmp_path):
    from selenium.webdriver.common.keys import Keys

    driver = browser
    viewport(driver, 1280, 800)
    driver.get(base_url + "/")
    driver.execute_script("localStorage.clear()")
    driver.get(base_url + "/")
    wait(driver, "return document.querySelector('#new-game-dialog').open")  # nothing stored: offer a new game
    presets = driver.execute_script("return [...document.querySelectorAll('#ng-rules option')].map(o => o.value)")
    assert {"standard", "short", "no-trump"} <= set(presets)
    new_game(driver, "play", "short", ["you", "heuristic", "heuristic", "heuristic"], SEED)

    move, seen = -1, set()
    while True:
        state = wait_for_me(driver, move)
        move = int(state["move"])
        if state["status"] == "over":
            break
        assert "turn" in one(driver, "#status").text.lower()
        if state["phase"] == "bid":
            buttons = css(driver, "#bids button")
            forbidden = [b for b in buttons if "forbidden" in b.get_attribute("class").split()]
            suggested = [b for b in buttons if "suggested" in b.get_attribute("class").split()]
            assert len(suggested) == 1 and suggested[0].is_enabled()
            if state["round"] == "0":  # I deal hand 1 after three bids of 0: bidding 1 would make the total 1
                assert [b.get_attribute("data-bid") for b in forbidden] == ["1"]
                assert one(driver, "#status").text.startswith("Your turn: bid 0 ")  # the legal bids only
                assert not forbidden[0].is_enabled()
                assert "dealer" in forbidden[0].get_attribute("title")
                assert "dealer" in one(driver, "#bid-reason").text
                assert one(driver, "#round-bar").text.startswith("Hand 1 of 5")
                screenshot(driver, shots / "web-bid.png")
                seen.add("forbidden")
            first = next(b for b in buttons if b.is_enabled())
            if state["round"] == "2":  # bid by keyboard alone: the digit key
                one(driver, "body").send_keys(first.get_attribute("data-bid"))
                seen.add("digit key")
            else:
                first.click()
            continue

        cards = css(driver, "#hand button.card")
        playable = [c for c in cards if "playable" in c.get_attribute("class").split()]
        illegal = [c for c in cards if "illegal" in c.get_attribute("class").split()]
        assert playable and len(playable) + len(illegal) == len(cards)
        for card in illegal:  # dimmed, with the engine's reason
            assert card.get_attribute("title") and card.get_attribute("aria-disabled") == "true"
            seen.add("illegal")
        trumped = css(driver, "#trick .card.trumped-in")
        if trumped and "trumped" not in seen:
            animation = driver.execute_script("return getComputedStyle(arguments[0]).animationName", trumped[0])
            assert animation == "trumped"  # it flashes: it is my turn
            assert one(driver, "#led-suit").text.startswith("Led:")
            screenshot(driver, shots / "web-trumped-in.png")
            seen.add("trumped")
        if state["round"] == "3" and "reload" not in seen:
            # Mid-hand: a reload comes back to the same game, the same move and the same cards.
            before = hand_cards(driver)
            table = state["table"]
            driver.refresh()
            again = wait_for_me(driver, move - 1)
            assert (again["table"], again["move"]) == (table, str(move))
            assert hand_cards(driver) == before
            assert css(driver, "#log li"), "the log is drawn again from the state's events"
            seen.add("reload")
            playable = [c for c in css(driver, "#hand button.card") if "playable" in c.get_attribute("class").split()]
        if state["round"] == "3" and css(driver, ".seat.impossible") and "scores" not in seen:
            # Hand 4, trick 2: two bids can no longer be made (b/o and the mark on the table and the sheet).
            assert "b/o" in one(driver, ".seat.impossible .bo").text
            assert_mark_drawn(driver, ".seat.impossible .bo svg.mark-impossible")
            one(driver, "#scores-button").click()
            wait(driver, "return document.querySelector('#score-sheet').open")
            rows = css(driver, "#score-table tr.hand-row")
            assert len(rows) == 3 and css(driver, "#score-table tr.hand-row td.bo"), "missed bids show b/o"
            assert css(driver, "#score-table tr.totals")
            assert one(driver, "#score-table tr.current td.bo").text.startswith("b/o")
            assert_mark_drawn(driver, "#score-table tr.current td.bo svg.mark-impossible")
            screenshot(driver, shots / "web-score-sheet.png")
            one(driver, "#score-sheet .close").click()
            wait(driver, "return !document.querySelector('#score-sheet').open")
            seen.add("scores")
        if state["round"] == "1":  # play by keyboard alone: the first playable card has the focus; Enter plays it
            focused = driver.switch_to.active_element
            assert focused.get_attribute("data-card") == playable[0].get_attribute("data-card")
            focused.send_keys(Keys.ENTER)
            seen.add("enter")
        else:
            playable[0].click()

    assert seen >= {"forbidden", "digit key", "illegal", "trumped", "reload", "scores", "enter"}, seen
    assert one(driver, "#game-over").is_displayed()
    assert one(driver, "#winners").text.startswith("P0 player (you) with")
    assert_mark_drawn(driver, "#winners svg.mark-winner")
    assert_mark_drawn(driver, ".seat.winner svg.mark-winner")
    assert "Game over" in one(driver, "#status").text
    assert css(driver, ".seat.winner[data-seat='0']")
    one(driver, "#scores-button").click()
    wait(driver, "return document.querySelector('#score-sheet').open")
    assert len(css(driver, "#score-table tr.hand-row")) == 5 and not css(driver, "#score-table tr.current")
    assert_mark_drawn(driver, "#score-table tr.totals td.winner svg.mark-winner")
    no_emoji_in_page(driver)
    one(driver, "#score-sheet .close").click()

    # The replay viewer: the finished game from the server's list, stepped with the buttons, keys and slider.
    table = page(driver)["table"]
    one(driver, "#replay-button").click()
    wait(driver, "return document.querySelector(`#replay-list button[data-game='${arguments[0]}']`)", table)
    one(driver, f"#replay-list button[data-game='{table}']").click()
    wait(driver, "return document.body.dataset.mode === 'replay' && document.body.dataset.move === '0'")
    one(driver, "#replay-next").click()
    wait(driver, "return document.body.dataset.move === '1'")
    one(driver, "body").send_keys(Keys.ARROW_RIGHT)
    wait(driver, "return document.body.dataset.move === '2'")
    one(driver, "body").send_keys(Keys.ARROW_LEFT)
    wait(driver, "return document.body.dataset.move === '1'")
    driver.execute_script("const s = document.querySelector('#replay-seek'); s.value = s.max;"
                          " s.dispatchEvent(new Event('input'))")
    wait(driver, "return document.body.dataset.status === 'over'")
    assert int(page(driver)["move"]) == move
    assert len(css(driver, ".seat .seat-hand")) == 0  # every hand played out: nothing left to show

    # A game log of `blackout eval` from a local file: its games in a select, each stepped the same way.
    from blackout_training.evaluation.tournament import evaluate
    from selenium.webdriver.support.ui import Select

    log = tmp_path / "games.jsonl"
    evaluate(["random", "heuristic"], rules="short", deals=1, seed=1, game_log=log, progress=False)
    one(driver, "#replay-button").click()
    wait(driver, "return document.querySelector('#replay-dialog').open")
    one(driver, "#replay-file").send_keys(str(log))
    wait(driver, "return document.querySelectorAll('#replay-game option').length === 4"
                 " && document.body.dataset.move === '0'")
    Select(one(driver, "#replay-game")).select_by_value("2")
    wait(driver, "return document.body.dataset.move === '0' && document.querySelector('#replay-game').value === '2'")
    one(driver, "#replay-next").click()
    wait(driver, "return document.body.dataset.move === '1'")
    assert len(css(driver, ".seat .seat-hand")) == 4  # the replay shows every hand
    screenshot(driver, tmp_path / "replay.png")
    one(driver, "#replay-end").click()
    wait(driver, "return document.body.dataset.status === 'over'")
    one(driver, "#replay-close").click()
    wait(driver, "return document.body.dataset.mode === 'play' && document.body.dataset.status === 'over'")


def test_watching_four_bots_with_every_hand_and_their_reasons(browser, base_url, shots):
    driver = browser
    viewport(driver, 1280, 800)
    driver.get(base_url + "/")
    wait(driver, "return document.body.dataset.mode !== 'none'")  # back at the stored game
    # A long delay, paused at once: the bots then move only when stepped.
    policy = "ppo" if importlib.util.find_spec("torch") else "heuristic"  # the trained net needs torch
    new_game(driver, "watch", "standard", [policy] * 4, SEED, delay_ms=5000)
    wait(driver, "return document.body.dataset.mode === 'watch'")
    one(driver, "#pause").click()
    wait(driver, "return document.querySelector('#pause').getAttribute('aria-pressed') === 'true'")
    reveal = one(driver, "#reveal")
    assert reveal.is_enabled()
    reveal.click()
    wait(driver, "return document.querySelectorAll('.seat .seat-hand .card').length === 40")
    one(driver, "#why-toggle").click()
    wait(driver, "return !document.querySelector('#why-panel').hidden")
    for _ in range(7):  # four bids, three cards of the first trick
        start = int(page(driver)["move"])
        one(driver, "#step").click()
        wait(driver, "return Number(document.body.dataset.move) > arguments[0]", start)
    wait(driver, "return document.querySelectorAll('#why-panel .why-action').length > 0")
    assert len(css(driver, "#why-panel .why-action.chosen")) == 1
    assert "points" in one(driver, "#why-value").text  # ppo's value head (the heuristic's expected score)
    if policy == "ppo":
        assert "%" in one(driver, "#why-panel .why-action.chosen .why-number").text  # its probabilities
    assert f"Policy: {policy}" in one(driver, "#why-panel").text
    assert len(css(driver, "#trick .play")) == 3
    screenshot(driver, shots / "web-watch-why.png")
    one(driver, "#why-toggle").click()
    wait(driver, "return document.querySelector('#why-panel').hidden")


def test_the_page_on_a_phone_and_a_table_that_cannot_be_opened(browser, base_url, shots):
    driver = browser
    viewport(driver, 360, 740, mobile=True)
    try:
        driver.get(base_url + "/")
        wait(driver, "return document.body.dataset.mode !== 'none'")
        new_game(driver, "play", "short", ["you", "heuristic", "heuristic", "heuristic"], SEED + 1)
        state = wait_for_me(driver, -1)
        assert state["yourTurn"] == "true"
        width = driver.execute_script("return document.documentElement.scrollWidth")
        assert width <= 360, f"the page is {width} px wide on a 360 px screen"
        screenshot(driver, shots / "web-phone.png")

        driver.get(base_url + "/?table=no-such-table")
        wait(driver, "return !document.querySelector('#join-failed').hidden")
        assert "no-such-table" in one(driver, "#join-failed-text").text
        assert one(driver, "#error-banner").is_displayed()
        one(driver, "#error-dismiss").click()
        assert not one(driver, "#error-banner").is_displayed()
        one(driver, "#join-failed-new").click()
        wait(driver, "return document.querySelector('#new-game-dialog').open")
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def no_emoji_in_page(driver: Any) -> None:
    """Nothing the page shows needs an emoji font (U+1F000 and above): its marks are inline SVG."""
    text = driver.execute_script("return document.body.innerText")
    emoji = sorted({ch for ch in text if ord(ch) >= 0x1F000})
    assert not emoji, f"the page shows {emoji}, which need an emoji font"


def test_a_table_for_two_people_in_two_browsers(served, browser, second_browser):
    """The host invites a friend by the link: each sees itself as "you" and the other by name, neither page
    holds the other's cards, and a forged seat token is refused with a way to join afresh."""
    from selenium.webdriver.support.ui import Select

    app, base_url = served
    host, guest = browser, second_browser
    viewport(host, 1280, 800)
    viewport(guest, 1280, 800)
    host.get(base_url + "/")
    wait(host, "return document.querySelector('#new-game-dialog').open || document.body.dataset.mode !== 'none'")
    if not one(host, "#new-game-dialog").get_attribute("open"):
        one(host, "#new-game").click()
    wait(host, "return document.querySelector('#new-game-dialog').open")
    one(host, "#ng-mode-table").click()
    Select(one(host, "#ng-rules")).select_by_value("short")
    Select(one(host, "#ng-players")).select_by_value("4")
    Select(one(host, "#ng-seat-1")).select_by_value("open")
    Select(one(host, "#ng-seat-2")).select_by_value("heuristic")
    Select(one(host, "#ng-seat-3")).select_by_value("heuristic")
    one(host, "#ng-seed").clear()  # (a table with an open seat is dealt from a seed no one at it knows)
    for field, value in (("#ng-delay", 0), ("#ng-name", "Ann")):
        one(host, field).clear()
        one(host, field).send_keys(str(value))
    one(host, "#ng-start").click()
    wait(host, "return document.body.dataset.status === 'lobby'")
    link = one(host, "#share-link").text
    table = page(host)["table"]
    assert link.endswith(f"?table={table}") and len(table) >= 22  # 128 random bits
    # The whole link is shown (it wraps rather than scrolls).
    assert host.execute_script("const e = document.querySelector('#share-link'); return e.scrollWidth <= e.clientWidth")

    guest.get(base_url + "/")
    guest.execute_script("localStorage.clear()")
    guest.get(link)
    wait(guest, "return document.body.dataset.you === '1' && document.body.dataset.status === 'lobby'")
    one(guest, "#lobby-name").clear()
    one(guest, "#lobby-name").send_keys("Bob")
    one(guest, "#lobby-name-set").click()
    wait(host, "return document.querySelector('#table .seat[data-seat=\"1\"] .seat-name').textContent === 'P1 Bob'")
    one(host, "#start").click()
    wait(guest, "return document.body.dataset.status === 'playing'")

    # Read in one script: the seats re-render on every move (the bots play at once), so element handles go stale.
    seat_names = ("return Object.fromEntries([...document.querySelectorAll('#table .seat')].map("
                  "e => [e.dataset.seat, e.querySelector('.seat-name').textContent.trim()]))")
    names = {driver: {int(k): v for k, v in driver.execute_script(seat_names).items()} for driver in (host, guest)}
    assert names[host][0] == "P0 Ann (you)" and names[host][1] == "P1 Bob"
    assert names[guest][1] == "P1 Bob (you)" and names[guest][0] == "P0 Ann"

    game = app.state.server.tables[table].table.game
    drivers = {0: host, 1: guest}
    checked = 0
    while game.round_index < 2 and not game.is_over:  # two hands, every move checked in both pages
        move = len(game.actions)
        for seat, driver in drivers.items():
            wait(driver, "return Number(document.body.dataset.move) >= arguments[0]", move)
            drawn_at, shown = cards_in_page(driver)
            leaked = shown - knowable_cards(game, drawn_at, seat)
            assert not leaked, f"move {drawn_at}: seat {seat}'s page holds hidden cards {leaked}"
            assert not css(driver, ".seat .seat-hand")
            checked += 1
        seat = game.current_player
        if seat in drivers:
            driver = drivers[seat]
            wait(driver, "return document.body.dataset.yourTurn === 'true'")
            if page(driver)["phase"] == "bid":
                click_first(driver, "#bids button:enabled")
            else:
                click_first(driver, "#hand button.card.playable")
        wait(host, "return Number(document.body.dataset.move) > arguments[0]", move)
    assert checked >= 10
    no_emoji_in_page(host)

    # A forged seat token (edited storage, or a link with another's id): refused, the seat not taken.
    guest.execute_script("localStorage.setItem('blackout.tokens', JSON.stringify({[arguments[0]]: 'forged'}));"
                         "localStorage.setItem('blackout.game', JSON.stringify({table: arguments[0], token: 'forged'}))",
                         table)
    guest.get(f"{base_url}/?table={table}")
    wait(guest, "return !document.querySelector('#join-failed').hidden")
    assert "not taken" in one(guest, "#join-failed-text").text
    assert one(guest, "#error-banner").get_attribute("data-code") == "bad_token"
    assert app.state.server.tables[table].table.seat_of("forged") is None
    one(guest, "#join-failed-rejoin").click()  # no open seat is left: the friend watches, hands hidden
    wait(guest, "return document.body.dataset.table === arguments[0] && document.body.dataset.you === ''", table)
    drawn_at, shown = cards_in_page(guest)
    assert not shown - knowable_cards(game, drawn_at, None)
