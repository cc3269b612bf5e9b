"""``blackout play``: a person at the keyboard, driven by scripted input, in-process and through the real command."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from blackout_training.play import screen
from blackout_training.play import session as play
from blackout_training.play.session import PlaySession, SavedSession, Seat, new_session, read_save, write_save

from blackout_env import BlackoutGame, Rules, SaveFileError
from blackout_env.game.cards import card_to_str, parse_card
from blackout_env.game.engine import deck_order

REPO = Path(__file__).resolve().parents[1]
SHORT = Rules.resolve("short")


class ScriptedPerson(io.TextIOBase):
    """Standard input that answers each prompt from the live game, and records what it typed.

    It tries what a careless person would: a forbidden bid (first refusing the
    offered ruling, then accepting it), an illegal card by name before a legal
    one by number; with ``quit_after`` it types ``q`` once that many actions
    have been taken; ``extra`` lines are typed before the first answer.
    """

    def __init__(self, output: io.StringIO, quit_after: int | None = None, extra: list[str] | None = None) -> None:
        self.output = output
        self.session: PlaySession | None = None
        self.quit_after = quit_after
        self.pending = list(extra or [])
        self.typed: list[str] = []
        self.refused_ruling = False
        self.tried_illegal: set[int] = set()

    def readable(self) -> bool:
        return True

    def readline(self, size: int = -1) -> str:
        line = self.pending.pop(0) if self.pending else self._answer()
        self.typed.append(line)
        return line + "\n"

    def _answer(self) -> str:
        assert self.session is not None
        game = self.session.game
        prompt = self.output.getvalue().rsplit("\n", 1)[-1]
        if prompt.startswith("Pass the keyboard"):
            return ""
        if prompt.startswith("Bid "):  # the offered ruling after a forbidden bid
            answer = "y" if self.refused_ruling else "n"
            self.refused_ruling = True
            return answer
        if self.quit_after is not None and len(game.actions) >= self.quit_after:
            self.quit_after = None
            return "q"
        view = game.view(game.current_player)
        if prompt.startswith("Your bid"):
            if view.forbidden_bid is not None:
                return str(view.forbidden_bid)
            return str(min(1, view.hand_size))
        assert prompt.startswith("Your card"), prompt
        cards = screen.hand_order(view)
        illegal = [c for c in cards if c not in view.legal_actions]
        key = len(game.actions)
        if illegal and key not in self.tried_illegal:
            self.tried_illegal.add(key)
            return card_to_str(illegal[0]).lower()
        legal = [number for number, c in enumerate(cards, start=1) if c in view.legal_actions]
        return str(legal[-1])


def run_session(saved: SavedSession, path: Path, **person) -> tuple[int, str, ScriptedPerson]:
    output = io.StringIO()
    stdin = ScriptedPerson(output, **person)
    session = PlaySession(saved, path, suggest_bid=lambda view: 0, input=stdin, output=output, unicode=False)
    stdin.session = session
    code = session.run()
    return code, output.getvalue(), stdin


def test_a_scripted_game_runs_to_the_end_with_the_final_sheet_and_winner(tmp_path):
    saved = new_session(SHORT, humans=1, bots="random", seed=7)
    code, out, _ = run_session(saved, tmp_path / "save.json")
    assert code == 0
    assert saved.game.is_over
    final = out[out.index("Game over. Final score sheet:"):]
    assert final.strip() == screen.render_final(saved.game, [s.name for s in saved.seats])
    assert read_save(tmp_path / "save.json").game == saved.game


def test_a_forbidden_bid_is_never_accepted_and_the_nearest_is_offered(tmp_path):
    saved = new_session(SHORT, humans=1, bots="random", seed=7)
    _, out, _ = run_session(saved, tmp_path / "save.json")
    assert "You cannot bid " in out and "the dealer may not make the bids total" in out
    assert "the nearest permitted bid? [y/n]" in out
    game = saved.game
    for bids, size in zip(game.round_bids, game.rules.hand_sizes):
        assert sum(bids) != size  # the hook held every hand
    # The first offer was refused and the bid asked for again; the second was accepted.
    first = out.index("the nearest permitted bid? [y/n]")
    assert out[first:].split("\n", 1)[1].startswith("Your bid")


def test_an_illegal_card_is_explained_and_asked_for_again(tmp_path):
    saved = new_session(SHORT, humans=1, bots="random", seed=7)
    _, out, person = run_session(saved, tmp_path / "save.json")
    assert "You cannot play" in out and "you must follow suit:" in out
    assert person.tried_illegal  # the script did try one


def test_bad_input_gets_a_message_and_a_new_prompt_never_a_traceback(tmp_path):
    extra = ["", "bogus", "99", "-1", "3.5", "x"]
    saved = new_session(SHORT, humans=1, bots="random", seed=3)
    code, out, _ = run_session(saved, tmp_path / "save.json", extra=extra)
    assert code == 0 and saved.game.is_over
    assert "Please type your bid, a number 0-1" in out
    assert "'bogus' is not a bid or a command" in out
    assert "There is no bid of 99 here" in out
    assert "There is no bid of -1 here" in out and "'3.5' is not a bid or a command" in out
    assert "Traceback" not in out


def test_a_line_that_is_not_text_is_asked_for_again(tmp_path):
    saved = new_session(SHORT, humans=1, bots="random", seed=3)
    output = io.StringIO()
    PlaySession(saved, tmp_path / "save.json", input=io.StringIO("\udcff\udcfe\n0\n"), output=output).run()
    assert "That line could not be read as text; please type it again." in output.getvalue()
    assert saved.game.bids[0] == 0  # the next line was read as the bid


def test_card_prompt_rejects_empty_out_of_range_and_unparsable_input(tmp_path):
    rules = Rules(num_players=3, hand_sizes=[3])
    saved = new_session(rules, humans=3, bots="random", seed=5)
    path = tmp_path / "save.json"
    output = io.StringIO()
    game = saved.game
    for _ in range(3):  # every seat bids first, so the next prompt is for a card
        game.step(game.legal_actions()[0])
    stdin = io.StringIO("\n9\n0\nZZ\n²\n" + "9" * 5000 + "\nx\n")
    code = PlaySession(saved, path, input=stdin, output=output, unicode=False).run()
    out = output.getvalue()
    assert code == 0
    assert "Please choose a card: its number 1-3 or its name" in out
    assert "There is no card 9: your cards are numbered 1-3." in out
    assert "There is no card 0" in out
    assert "'ZZ' is not a card or a command" in out
    assert "'²' is not a card or a command" in out  # (a digit to str.isdigit, not to int)
    assert "There is no card 99999999: your cards are numbered 1-3." in out
    assert "End of input: game saved to" in out
    assert len(game.actions) == 3  # nothing was played


def test_leading_trump_before_it_is_broken_is_explained_and_asked_again(tmp_path):
    rules = Rules.resolve("trump-must-break").replace(num_players=3, hand_sizes=[2])
    order = deck_order([["3C", "4C"], ["AS", "2C"], ["2H", "8D"]], dealer=0, turned_card="QS")
    game = BlackoutGame(rules, decks=[order])
    seats = [Seat(f"P{seat} human", True) for seat in range(3)]
    output = io.StringIO()
    stdin = io.StringIO("0\n0\n1\nAS\n1\n")  # P1, P2, P0 bid; P1 leads: the ace of trump, then card 1 (2C)
    PlaySession(SavedSession(game, seats, 0, False), tmp_path / "s.json", input=stdin, output=output).run()
    assert (
        "You cannot play AS: trump (spades) may not be led until trump is broken, and you hold other suits: 2C."
        in output.getvalue()
    )
    assert game.current_trick == [(1, parse_card("2C"))]


def test_commands_show_score_sheet_last_trick_and_help(tmp_path):
    saved = new_session(SHORT, humans=1, bots="random", seed=7)
    _, out, _ = run_session(saved, tmp_path / "save.json", extra=["s", "l", "h", "S"])
    assert out.count("(no hand has been scored yet)") == 2
    assert "No trick has been played yet." in out
    assert "q   save and quit" in out


def test_last_trick_after_a_trick_names_cards_and_winner(tmp_path):
    rules = Rules(num_players=3, hand_sizes=[2])
    saved = new_session(rules, humans=3, bots="random", seed=5)
    game = saved.game
    while len(game.actions) < 6:  # three bids and one whole trick
        game.step(game.legal_actions()[0])
    output = io.StringIO()
    PlaySession(saved, tmp_path / "s.json", input=io.StringIO("l\n"), output=output, unicode=False).run()
    trick = game.history[-1] if game.history[-1][0] == "trick" else next(e for e in game.history if e[0] == "trick")
    assert screen.render_last_trick(trick[2], trick[1], [s.name for s in saved.seats]) in output.getvalue()


def test_quit_saves_and_resume_continues_exactly_as_if_never_stopped(tmp_path):
    straight = new_session(SHORT, humans=1, bots="random", seed=7)
    run_session(straight, tmp_path / "a.json")

    path = tmp_path / "b.json"
    stopped = new_session(SHORT, humans=1, bots="random", seed=7)
    code, out, _ = run_session(stopped, path, quit_after=9)
    assert code == 0 and not stopped.game.is_over
    assert f"Game saved to {path}" in out and "blackout play --resume --save" in out
    resumed = read_save(path)
    assert resumed.game == stopped.game
    code, out, _ = run_session(resumed, path)
    assert code == 0 and out.startswith("Resuming:")
    assert resumed.game == straight.game  # same deals, same bids, same cards, same bots' choices
    assert resumed.game.scores == straight.game.scores


def test_end_of_input_saves_and_exits_cleanly(tmp_path):
    saved = new_session(SHORT, humans=1, bots="random", seed=7)
    path = tmp_path / "save.json"
    output = io.StringIO()
    code = PlaySession(saved, path, input=io.StringIO(""), output=output).run()
    assert code == 0
    assert f"End of input: game saved to {path}" in output.getvalue()
    assert read_save(path).game == saved.game


def test_hot_seat_hides_each_hand_until_its_owner_presses_enter(tmp_path):
    rules = Rules(num_players=3, hand_sizes=[2, 1])
    saved = new_session(rules, humans=2, bots="random", seed=2, hot_seat=True)
    code, out, person = run_session(saved, tmp_path / "save.json")
    assert code == 0 and saved.game.is_over
    segments = out.split("Pass the keyboard to ")[1:]
    assert len(segments) >= 2 and "" in person.typed
    for segment in segments:
        owner = segment.split(".", 1)[0]
        before_enter, after = segment.split("press Enter to see your hand: ", 1)
        assert "Your hand:" not in before_enter
        # Every table shown after Enter is for the seat that pressed it (the ">" marks the seat to act).
        for table in after.split("Your hand:")[:-1]:
            acting = [line for line in table.splitlines() if line.startswith("> ")]
            assert acting and acting[-1][2:].startswith(owner)
    assert out.count("(screen cleared for the next player)") == len(segments)


def test_save_is_written_atomically_and_a_failed_write_keeps_the_old_save(tmp_path, monkeypatch):
    path = tmp_path / "save.json"
    saved = new_session(SHORT, humans=1, bots="random", seed=1)
    write_save(path, saved)
    before = path.read_bytes()
    saved.game.step(saved.game.legal_actions()[0])

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(play.os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        write_save(path, saved)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["save.json"]  # no temporary file left behind


@pytest.mark.parametrize(
    "text, message",
    [
        ("{not json", "is not valid JSON"),
        ('{"format": "something-else"}', "is not a saved game of blackout play"),
        ('{"format": "blackout-play", "version": 1}', "lacks game, seats, bot_seed, hot_seat"),
        ('{"format": "blackout-play", "version": true}', "has save version True"),
        ("[" * 100_000 + "]" * 100_000, "is not valid JSON"),
    ],
)
def test_a_corrupt_save_is_reported_with_the_file_named(tmp_path, text, message):
    path = tmp_path / "save.json"
    path.write_text(text)
    with pytest.raises(SaveFileError, match=message) as caught:
        read_save(path)
    assert str(path) in str(caught.value)
    assert path.read_text() == text


def test_a_save_with_impossible_moves_is_reported(tmp_path):
    path = tmp_path / "save.json"
    saved = new_session(SHORT, humans=1, bots="random", seed=1)
    write_save(path, saved)
    data = json.loads(path.read_text())
    data["game"]["actions"] = [0, 0, 0]
    path.write_text(json.dumps(data))
    with pytest.raises(SaveFileError, match="is damaged"):
        read_save(path)


def test_default_save_folder_is_the_users_data_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert play.default_save_path() == tmp_path / "data" / "blackout" / "save.json"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert play.default_save_path() == tmp_path / "home" / ".local" / "share" / "blackout" / "save.json"


def test_seats_are_people_first_then_bots_by_policy():
    saved = new_session(Rules(num_players=4), humans=1, bots="heuristic,random,heuristic", seed=0)
    assert saved.seats == [
        Seat("P0 you", True),
        Seat("P1 heuristic", False, "heuristic"),
        Seat("P2 random", False, "random"),
        Seat("P3 heuristic", False, "heuristic"),
    ]
    assert [s.name for s in new_session(Rules(num_players=3), humans=2, seed=0).seats] == [
        "P0 human",
        "P1 human",
        "P2 heuristic",
    ]


def test_bots_option_gives_one_policy_for_all_or_one_per_seat_and_keeps_policy_options_together():
    assert play.bot_policies("search", 3) == ["search", "search", "search"]
    assert play.bot_policies("heuristic, search:samples=8,time_limit_ms=50 ,ppo:runs/a.pt", 3) == [
        "heuristic",
        "search:samples=8,time_limit_ms=50",
        "ppo:runs/a.pt",
    ]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"humans": 5}, "--humans: must be 0..4"),
        ({"humans": -1}, "--humans: must be 0..4"),
        ({"bots": "random,heuristic"}, "3 bot seats need one policy for all or one per seat, got 2"),
        ({"bots": "random,,heuristic"}, "empty policy name"),
        ({"seed": -3}, "--seed: must be a whole number >= 0"),
    ],
)
def test_bad_options_are_clear_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        new_session(Rules(num_players=4), **kwargs)


def test_an_unknown_bot_is_a_clear_error(tmp_path):
    saved = new_session(Rules(num_players=3), humans=1, bots="no-such-bot", seed=0)
    with pytest.raises(ValueError, match="no-such-bot"):
        PlaySession(saved, tmp_path / "save.json", output=io.StringIO())


class AlwaysBidsThree:
    """A broken policy: bids 3 tricks whatever the hand (the first hand has one card)."""

    name = "broken"

    def act(self, view):
        return view.num_cards + 3


def test_a_policy_that_breaks_the_rules_is_a_clear_error_and_the_save_stays_good(tmp_path):
    saved = new_session(SHORT, humans=0, seed=1)
    path = tmp_path / "save.json"
    session = PlaySession(saved, path, policy_loader=lambda spec, rules, seed: AlwaysBidsThree(), output=io.StringIO())
    with pytest.raises(ValueError, match="the broken policy in seat 1 chose an illegal action: .*cannot bid 3"):
        session.run()
    assert read_save(path).game == saved.game and saved.game.actions == []


def test_a_save_file_that_cannot_be_written_is_a_clear_error(tmp_path):
    (tmp_path / "not-a-folder").write_text("")
    saved = new_session(SHORT, humans=1, bots="random", seed=1)
    session = PlaySession(saved, tmp_path / "not-a-folder" / "save.json", input=io.StringIO(""), output=io.StringIO())
    with pytest.raises(ValueError, match="cannot save the game to .*not-a-folder"):
        session.run()


def test_bots_alone_play_a_whole_match_without_input(tmp_path):
    saved = new_session(SHORT, humans=0, bots="heuristic,random,heuristic,random", seed=4)
    output = io.StringIO()
    assert PlaySession(saved, tmp_path / "save.json", input=io.StringIO(""), output=output).run() == 0
    assert saved.game.is_over and "Game over." in output.getvalue()


# --------------------------------------------------------------- the real command, through its stdin


def blackout(*args: str, stdin: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "blackout_training.cli", "play", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=120,
    )


@pytest.fixture
def env(tmp_path):
    environment = dict(os.environ)
    environment["XDG_DATA_HOME"] = str(tmp_path / "data")
    environment["PYTHONIOENCODING"] = "utf-8"
    return environment


def scripted_lines(seed: int, tmp_path: Path, quit_after: int) -> tuple[list[str], list[str], BlackoutGame]:
    """What the scripted person types before quitting and after resuming (played here in-process
    with the command's bots), and the finished game those lines lead to."""
    path = tmp_path / "script.json"
    saved = new_session(SHORT, humans=1, bots="heuristic,random,heuristic", seed=seed)
    _, _, before = run_session(saved, path, quit_after=quit_after)
    resumed = read_save(path)
    _, _, after = run_session(resumed, path)
    return before.typed, after.typed, resumed.game


def test_command_plays_a_scripted_game_with_illegal_card_and_forbidden_bid_then_saves_and_resumes(tmp_path, env):
    before, after, expected = scripted_lines(seed=7, tmp_path=tmp_path, quit_after=10)
    assert before[-1] == "q" and "n" in before + after and "y" in before + after
    options = ("--rules", "short", "--seed", "7", "--bots", "heuristic,random,heuristic", "--ascii")
    first = blackout(*options, stdin="\n".join(before) + "\n", env=env)
    assert first.returncode == 0, first.stderr
    save = tmp_path / "data" / "blackout" / "save.json"
    assert "Game saved to " + str(save) in first.stdout
    assert "Suggested bid: " in first.stdout  # the heuristic bot's hint
    assert "the nearest permitted bid? [y/n]" in first.stdout or "You cannot play" in first.stdout

    second = blackout("--resume", stdin="\n".join(after) + "\n", env=env)
    assert second.returncode == 0, second.stderr
    assert "Traceback" not in first.stderr + second.stderr
    both = first.stdout + second.stdout
    assert "You cannot bid " in both and "You cannot play " in both
    assert second.stdout.startswith("Resuming:")
    names = [s.name for s in read_save(save).seats]
    assert second.stdout.rstrip().endswith(screen.render_final(expected, names))
    assert read_save(save).game == expected


def test_command_saves_and_exits_at_end_of_input_and_refuses_to_overwrite_the_unfinished_game(tmp_path, env):
    save = tmp_path / "my-save.json"
    first = blackout("--rules", "short", "--seed", "4", "--save", str(save), stdin="1\n", env=env)
    assert first.returncode == 0, first.stderr
    assert "End of input: game saved to" in first.stdout
    assert f"blackout play --resume --save {save}" in first.stdout
    content = save.read_text()
    again = blackout("--rules", "short", "--save", str(save), stdin="", env=env)
    assert again.returncode == 2
    assert "holds an unfinished game" in again.stderr and "--resume" in again.stderr
    assert save.read_text() == content


def test_command_reports_a_corrupt_save_and_leaves_it_untouched(tmp_path, env):
    save = tmp_path / "save.json"
    save.write_text("{ this is not a saved game")
    resumed = blackout("--resume", "--save", str(save), stdin="", env=env)
    assert resumed.returncode == 2
    assert "cannot resume" in resumed.stderr and "is not valid JSON" in resumed.stderr
    assert "left as it is" in resumed.stderr and "Traceback" not in resumed.stderr
    fresh = blackout("--save", str(save), stdin="", env=env)
    assert fresh.returncode == 2 and "left as it is" in fresh.stderr
    assert save.read_text() == "{ this is not a saved game"


def test_command_resume_without_a_save_is_a_clear_error(tmp_path, env):
    result = blackout("--resume", "--save", str(tmp_path / "none.json"), stdin="", env=env)
    assert result.returncode == 2
    assert "there is no saved game at" in result.stderr


def test_command_resume_of_a_save_whose_bot_does_not_load_names_the_save_and_its_seat(tmp_path, env):
    save = tmp_path / "s.json"
    assert blackout("--players", "3", "--bots", "random", "--seed", "1", "--save", str(save), stdin="", env=env).returncode == 0
    data = json.loads(save.read_text())
    data["seats"][1]["policy"] = "ppo:/nonexistent.pt"  # a checkpoint moved away since
    save.write_text(json.dumps(data))
    before = save.read_bytes()
    result = blackout("--resume", "--save", str(save), stdin="", env=env)
    assert result.returncode == 2
    assert f"cannot resume {save}: seat 1 (ppo:/nonexistent.pt): checkpoint '/nonexistent.pt' does not exist" in result.stderr
    assert "left as it is" in result.stderr and save.read_bytes() == before


class CommandsAtTheRuling(ScriptedPerson):
    """Types h, s, l and then q at the first [y/n] ruling prompt (after a forbidden bid)."""

    def __init__(self, output: io.StringIO) -> None:
        super().__init__(output)
        self.at_ruling = ["h", "s", "l", "maybe", "q"]

    def _answer(self) -> str:
        prompt = self.output.getvalue().rsplit("\n", 1)[-1]
        if prompt.startswith("Bid ") and self.at_ruling:
            return self.at_ruling.pop(0)
        return super()._answer()


def test_the_yes_no_prompt_takes_the_commands_of_every_prompt(tmp_path):
    saved = new_session(SHORT, humans=1, bots="random", seed=7)
    output = io.StringIO()
    stdin = CommandsAtTheRuling(output)
    session = PlaySession(saved, tmp_path / "save.json", suggest_bid=lambda view: 0, input=stdin, output=output,
                          unicode=False)
    stdin.session = session
    assert session.run() == 0
    out = output.getvalue()
    ruling = out[out.index("the nearest permitted bid? [y/n]"):]
    assert screen.HELP in ruling  # h
    assert "total" in ruling  # s: the score sheet's totals row
    assert "Please answer y or n (or s score, l last trick, h help, q quit)." in ruling  # "maybe"
    assert "Game saved to" in ruling and not saved.game.is_over  # q saved and quit
    assert read_save(tmp_path / "save.json").game == saved.game


def test_a_checkpoint_given_by_a_relative_path_resumes_from_another_folder(tmp_path, monkeypatch):
    from blackout_training.agents.policy_net import make_model, save_checkpoint

    work = tmp_path / "work"
    work.mkdir()
    save_checkpoint(work / "mine.pt", make_model(SHORT, [8]), SHORT)
    monkeypatch.chdir(work)
    saved = new_session(SHORT, humans=0, bots="ppo:mine.pt", seed=3)
    assert saved.seats[1].policy == f"ppo:{work / 'mine.pt'}"
    path = tmp_path / "save.json"
    write_save(path, saved)
    monkeypatch.chdir(tmp_path)  # elsewhere: "mine.pt" does not exist here
    resumed = read_save(path)
    session = PlaySession(resumed, path, input=io.StringIO(""), output=io.StringIO(), unicode=False)
    assert session.run() == 0 and resumed.game.is_over
