"""Game logs of ``blackout eval``: every game written, in order, and replayed exactly; bad logs refused by line."""

import json
from collections import defaultdict
from pathlib import Path

import pytest
from blackout_training.cli import main
from blackout_training.evaluation.game_log import GameLogError, LoggedGame, parse_game_log, read_game_log
from blackout_training.evaluation.tournament import EvalResult, evaluate
from file_audit import files_opened

from blackout_env import BlackoutGame, Rules, SaveFileError


def replayed_figures(games: list[LoggedGame]) -> tuple[dict, dict, dict]:
    """Per policy, from the replays: mean score per hand, hands played, and per deal the mean score per hand."""
    totals: dict = defaultdict(float)
    hands: dict = defaultdict(int)
    per_deal: dict = defaultdict(lambda: defaultdict(lambda: [0.0, 0]))
    for logged in games:
        game = logged.replay()
        assert game.scores == logged.scores and game.round_scores == logged.round_scores
        for seat, name in enumerate(logged.seats):
            for row in game.round_scores:
                totals[name] += row[seat]
                hands[name] += 1
                per_deal[name][logged.deal][0] += row[seat]
                per_deal[name][logged.deal][1] += 1
    means = {name: totals[name] / hands[name] for name in totals}
    deal_means = {name: [s / c for _, (s, c) in sorted(deals.items())] for name, deals in per_deal.items()}
    return means, dict(hands), deal_means


def assert_replays_match(result: EvalResult, games: list[LoggedGame]) -> None:
    means, hands, deal_means = replayed_figures(games)
    for stats in result.policies:
        assert means[stats.name] == stats.mean_score_per_hand
        assert hands[stats.name] == stats.hands
        assert deal_means[stats.name] == result.per_deal[stats.name]


@pytest.fixture(scope="module")
def short_log(tmp_path_factory):
    """A tiny tournament on the short rules, its game log from one worker and from two."""
    folder = tmp_path_factory.mktemp("log")
    one, two = folder / "one.jsonl", folder / "two.jsonl"
    result = evaluate(["heuristic", "random"], "short", deals=3, seed=2, workers=1, game_log=one)
    again = evaluate(["heuristic", "random"], "short", deals=3, seed=2, workers=2, game_log=two)
    return result, again, one, two


def test_every_game_is_logged_in_deal_and_rotation_order(short_log):
    result, _, path, _ = short_log
    games = read_game_log(path)
    assert [(g.deal, g.rotation) for g in games] == [(d, j) for d in range(3) for j in range(4)]
    assert [g.line for g in games] == list(range(1, 13))
    assert games[1].seats == ["random", "random", "random", "heuristic"]
    assert games[1].label == "deal 0, rotation 1: random, random, random, heuristic"
    assert all(g.rules == result.rules and not g.hands for g in games)
    first = json.loads(path.read_text().splitlines()[0])
    assert (first["format"], first["version"]) == ("blackout-game-log", 1)
    assert len(first["decks"]) == result.rules.num_rounds and len(first["round_scores"]) == result.rules.num_rounds


def test_replayed_games_have_the_scores_the_evaluation_reported(short_log):
    result, _, path, _ = short_log
    games = read_game_log(path)
    assert all(g.replay().is_over for g in games)
    assert_replays_match(result, games)


def test_the_log_does_not_depend_on_the_number_of_workers(short_log):
    result, again, one, two = short_log
    assert one.read_bytes() == two.read_bytes()
    assert again.to_dict() == result.to_dict()


def test_a_random_first_dealer_is_replayed_as_dealt(tmp_path):
    rules = Rules.preset("short").replace(first_dealer="random")
    path = tmp_path / "games.jsonl"
    result = evaluate(["heuristic", "random"], rules, deals=4, seed=5, game_log=path)
    games = read_game_log(path)
    assert len({g.first_dealer for g in games}) > 1  # the drawn dealers, not the rules' "random"
    for logged in games:
        assert logged.replay().history[0][2] == logged.first_dealer  # ("deal", round, dealer, ...)
    assert_replays_match(result, games)


def test_single_hands_are_logged_and_replayed(tmp_path):
    path = tmp_path / "hands.jsonl"
    result = evaluate(["heuristic", "random"], "short", deals=5, seed=1, hands=True, game_log=path)
    games = read_game_log(path)
    assert len(games) == 5 * 4
    for logged in games:
        assert logged.hands and logged.start_round == logged.deal % 5
        assert len(logged.round_scores) == 1 and logged.scores == logged.round_scores[0]
    assert_replays_match(result, games)


def test_game_at_steps_through_the_game_forward_and_back(short_log):
    logged = read_game_log(short_log[2])[5]
    assert logged.game_at(0).actions == [] and logged.game_at(0).round_index == 0
    for move in [*range(logged.moves + 1), 7, 3, logged.moves, 0]:
        game = logged.game_at(move)
        assert game.actions == logged.actions[:move]
    copy = logged.game_at(4)
    copy.step(copy.legal_actions()[0])  # a copy: stepping it leaves the log's game alone
    assert logged.game_at(5).actions == logged.actions[:5]
    assert logged.replay() == logged.game_at(logged.moves)
    with pytest.raises(ValueError, match=f"move: must be 0..{logged.moves}"):
        logged.game_at(logged.moves + 1)


def test_a_log_is_read_from_a_path_or_parsed_from_its_text(short_log):
    path = short_log[2]
    text = path.read_text()
    labels = [g.label for g in read_game_log(path)]
    assert [g.label for g in read_game_log(str(path))] == labels
    for source in (text, text.encode()):
        assert [g.label for g in parse_game_log(source)] == labels
    assert len(parse_game_log(text.splitlines()[0])) == 1


def test_parsing_a_logs_text_never_opens_a_path(short_log):
    """A one-line text that names a file (even a valid log) is text that is not JSON, never a path."""
    for source in (str(short_log[2]), "/etc/passwd", "~/x.jsonl", "../games.jsonl", "/dev/zero"):
        with files_opened() as opened, pytest.raises(GameLogError, match="line 1: not JSON"):
            parse_game_log(source)
        assert opened == [], f"{source!r} opened {opened}"
    with pytest.raises(GameLogError, match="expected a file's path"):
        read_game_log(short_log[2].read_bytes())


def _corrupt(line: dict, change: str) -> str:
    if change == "not json":
        return "{not json"
    if change == "format":
        line["format"] = "blackout-game"
    elif change == "version":
        line["version"] = 2
    elif change == "missing":
        del line["actions"]
    elif change == "illegal":
        line["actions"][0] = 0  # a card while bidding
    elif change == "scores":
        line["scores"][0] += 1
    elif change == "short":
        line["actions"].pop()
    elif change == "long":
        line["actions"].append(52)
    elif change == "deck":
        line["decks"][0][0] = line["decks"][0][1]
    elif change == "seats":
        line["seats"] = line["seats"][:2]
    elif change == "array":
        return "[1, 2]"
    return json.dumps(line)


@pytest.mark.parametrize(
    "change, message",
    [
        ("not json", "line 2: not JSON"),
        ("array", "line 2: expected a JSON object, got list"),
        ("format", "line 2: not a Blackout game log line \\(format 'blackout-game'"),
        ("version", "line 2: game log version 2; this version reads 1"),
        ("missing", "line 2: missing field actions"),
        ("illegal", "line 2: action #0 \\(0\\) is illegal: player 1 cannot play 2C: bidding is not over yet"),
        ("scores", "line 2: the logged scores \\[.*\\] differ from the replay's \\[.*\\]"),
        ("short", "line 2: the actions stop before the match ends"),
        ("long", "line 2: action #\\d+ \\(52\\) comes after the game ended"),
        ("deck", "line 2: the game cannot be set up: decks\\[0\\] is not a permutation"),
        ("seats", "line 2: seats: expected 4 policy names"),
    ],
)
def test_a_corrupt_log_is_refused_naming_the_line(short_log, change, message):
    lines = short_log[2].read_text().splitlines()[:3]
    lines[1] = _corrupt(json.loads(lines[1]), change)
    with pytest.raises(GameLogError, match=message) as caught:
        parse_game_log("\n".join(lines))
    assert isinstance(caught.value, SaveFileError) and isinstance(caught.value, ValueError)
    assert caught.value.line == 2


def test_an_empty_or_missing_log_is_refused(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    with pytest.raises(GameLogError, match="the game log is empty"):
        read_game_log(empty)
    for source in ("", "\n \n"):
        with pytest.raises(GameLogError, match="the game log is empty"):
            parse_game_log(source)
    with pytest.raises(GameLogError, match="cannot read the game log .*missing.jsonl"):
        read_game_log(tmp_path / "missing.jsonl")


def test_an_unwritable_game_log_is_refused_before_any_game(tmp_path):
    decisions = []

    def counting(view):
        decisions.append(view)
        return view.legal_actions[0]

    (tmp_path / "a_file").write_text("")
    for path, message in [
        (tmp_path / "a_file" / "games.jsonl", "game_log: .*games.jsonl.*a_file' is a file, not a folder"),
        (tmp_path, "game_log: .* is a folder"),
    ]:
        with pytest.raises(ValueError, match=message):
            evaluate({"counting": counting}, "short", deals=2, game_log=path)
    assert decisions == []


def test_a_failed_evaluation_leaves_the_old_log_untouched(tmp_path):
    path = tmp_path / "games.jsonl"
    path.write_text("the previous log\n")

    def failing(view):
        if view.round_index == 2:
            raise RuntimeError("the policy broke")
        return view.legal_actions[0]

    with pytest.raises(RuntimeError, match="the policy broke"):
        evaluate({"failing": failing}, "short", deals=2, game_log=path)
    assert path.read_text() == "the previous log\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["games.jsonl"]  # no partial file left behind


def test_eval_command_writes_the_game_log(capsys, tmp_path):
    path = tmp_path / "logs" / "games.jsonl"
    assert main(["eval", "--policies", "heuristic", "random", "--rules", "short", "--deals", "2", "--seed", "3",
                 "--no-progress", "--game-log", str(path)]) == 0
    assert f"wrote {path} (8 games)" in capsys.readouterr().out
    games = read_game_log(path)
    assert len(games) == 8 and isinstance(games[0].replay(), BlackoutGame)
    assert main(["eval", "--policies", "random", "--rules", "short", "--deals", "2", "--no-progress",
                 "--game-log", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "--game-log: " in err and "is a folder" in err and "Traceback" not in err


def test_a_logged_game_writes_the_line_it_reads(short_log):
    path: Path = short_log[2]
    first = path.read_text().splitlines()[0]
    assert parse_game_log(first)[0].to_json() == first
