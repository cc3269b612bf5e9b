"""Policy specs and the registry (``blackout_env.agents.policies``): one registry for evaluation, play, training and Gym."""

from __future__ import annotations

import json
import subprocess
import sys

import blackout_training.agents.policies as training_policies
import pytest
from blackout_baselines import SearchBot
from blackout_training.cli import main
from blackout_training.evaluation.tournament import evaluate

import blackout_env.agents.policies as env_policies
from blackout_env import BlackoutGame, BlackoutGymEnv, Rules


def test_the_registry_lives_in_blackout_env_and_training_reexports_it():
    assert training_policies.LOADERS is env_policies.LOADERS
    assert training_policies.load_policy is env_policies.load_policy
    env_policies.register_policy("lazy-test", "blackout_training.agents.policy_net:load_ppo_policy")
    try:
        assert "lazy-test" in training_policies.policy_names()
        assert training_policies.load_policy("lazy-test").name == "ppo"  # the shipped checkpoint
    finally:
        del env_policies.LOADERS["lazy-test"]


def test_builtin_loaders_are_named_by_module_strings_and_import_nothing_until_used():
    code = (
        "import sys, blackout_env.agents.policies as p; "
        "print(sorted(m for m in ('torch', 'blackout_baselines', 'blackout_training') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("spec", ["random:seed=3", "heuristic:seed=3", "search:seed=3,samples=2"])
def test_a_seed_option_in_a_spec_is_accepted(spec):
    policy = env_policies.load_policy(spec, "short", seed=7)
    game = BlackoutGame(Rules.preset("short"), seed=0)
    assert policy.act(game.view(game.current_player)) in game.legal_actions()


def test_the_specs_seed_wins_over_the_callers_seed():
    game = BlackoutGame(Rules.preset("standard"), seed=0)
    view = game.view(game.current_player)

    def actions(spec: str, seed: int) -> list[int]:
        policy = env_policies.load_policy(spec, seed=seed)
        return [policy.act(view) for _ in range(30)]

    assert actions("random:seed=3", 1) == actions("random:seed=3", 2)  # the spec's seed decides
    assert actions("random:seed=3", 1) != actions("random:seed=4", 1)


def test_a_reseeded_policy_with_a_spec_seed_mixes_both_seeds():
    game = BlackoutGame(Rules.preset("standard"), seed=0)
    view = game.view(game.current_player)

    def actions(spec: str, reseed: int) -> list[int]:
        policy = env_policies.load_policy(spec)
        policy.seed(reseed)
        return [policy.act(view) for _ in range(30)]

    assert actions("random:seed=3", 5) == actions("random:seed=3", 5)
    assert actions("random:seed=3", 5) != actions("random:seed=4", 5)
    assert actions("random:seed=3", 5) != actions("random:seed=3", 6)


def test_a_spec_seed_keeps_the_bots_own_methods():
    policy = env_policies.load_policy("heuristic:seed=3", "short")
    game = BlackoutGame(Rules.preset("short"), seed=0)
    assert policy.suggest_bid(game.view(game.current_player)) in range(0, 2)
    assert isinstance(env_policies.load_policy("search:seed=1,samples=2").policy, SearchBot)


@pytest.mark.parametrize("value", ["x", "-1", "1.5"])
def test_a_bad_spec_seed_is_a_clear_error(value):
    with pytest.raises(ValueError, match=rf"policy 'random:seed={value}': seed must be a whole number >= 0"):
        env_policies.load_policy(f"random:seed={value}")


def test_eval_cli_takes_a_seed_option(capsys):
    assert main(["eval", "--policies", "random:seed=3", "heuristic", "--deals", "1", "--rules", "short",
                 "--no-progress"]) == 0
    assert "random:seed=3" in capsys.readouterr().out


def test_evaluate_accepts_a_plain_callable_as_gym_opponents_do():
    def lowest_legal(view):
        return min(view.legal_actions)

    result = evaluate([lowest_legal, "random"], "short", deals=2)
    assert result.stats("lowest_legal").hands == 2 * 4 * 5  # 2 deals x 4 rotations x 5 hands, one seat each
    BlackoutGymEnv(rules="short", opponents=lowest_legal).reset(seed=0)


def test_gym_opponents_take_any_policy_spec():
    environment = BlackoutGymEnv(rules="short", opponents="search:samples=2")
    observation, info = environment.reset(seed=1)
    terminated = False
    while not terminated:
        legal = info["action_mask"].nonzero()[0]
        observation, reward, terminated, truncated, info = environment.step(int(legal[0]))
    with pytest.raises(ValueError, match="opponents: .*samples=x=1"):
        BlackoutGymEnv(rules="short", opponents="search:samples=x=1,nonsense")


def test_gym_opponents_with_a_spec_seed_are_reproducible():
    def episode(opponents: str) -> list[int]:
        environment = BlackoutGymEnv(rules="short", opponents=opponents)
        _, info = environment.reset(seed=3)
        terminated = False
        while not terminated:
            _, _, terminated, _, info = environment.step(int(info["action_mask"].nonzero()[0][0]))
        return [bid for bids in environment.game.round_bids for bid in bids]

    assert episode("random:seed=1") == episode("random:seed=1")


def test_one_deal_writes_strict_json_with_null_intervals_and_says_why(tmp_path, capsys):
    assert main(["eval", "--policies", "random", "heuristic", "--deals", "1", "--rules", "short", "--no-progress",
                 "--no-plot", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    text = (tmp_path / "results.json").read_text()
    data = json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} in results.json"))
    assert data["pairwise"][0]["low"] is None and data["pairwise"][0]["high"] is None
    assert data["pairwise"][0]["ci95"] is None
    assert "one deal gives no interval" in out and "a 95% interval needs at least two deals" in out


def test_the_difference_of_a_reversed_pair_keeps_an_undefined_interval():
    result = evaluate(["random", "heuristic"], "short", deals=1)
    reversed_pair = result.difference("heuristic", "random")
    assert reversed_pair["low"] is None and reversed_pair["high"] is None
    assert reversed_pair["mean"] == -result.difference("random", "heuristic")["mean"]


def test_the_eval_table_stays_aligned_with_long_names():
    long_name = "search:samples=2,time_limit_ms=50,seed=1"
    result = evaluate([long_name, "random"], "short", deals=2)
    lines = result.table().splitlines()
    header = next(line for line in lines if line.startswith("policy "))
    rows = [line for line in lines if line.startswith((long_name + " ", "random "))][:2]
    for row in rows:
        assert len(row) == len(header)
        # every figure ends where its column's title ends
        for title in ("score/hand (95% CI)", "bid made", "match score", "match wins", "hands"):
            end = header.index(title) + len(title)
            assert row[end - 1] != " " and (end == len(row) or row[end] == " "), (title, row)


TORCH_MISSING = "import sys; sys.modules['torch'] = None; from blackout_training.cli import main; sys.exit(main({argv!r}))"


@pytest.mark.parametrize(
    "argv",
    [
        ["train", "--config", "configs/train/tiny.yaml", "--set", "run.out_dir=/nonexistent-never-written"],
        ["eval", "--policies", "ppo", "random", "--deals", "1", "--no-progress"],
        ["play", "--bots", "ppo", "--humans", "0", "--rules", "short", "--save", "/nonexistent-never-written/s.json"],
    ],
)
def test_without_torch_a_command_says_to_install_the_train_extra(argv):
    root = __import__("pathlib").Path(__file__).resolve().parents[1]
    run = subprocess.run([sys.executable, "-c", TORCH_MISSING.format(argv=argv)], capture_output=True, text=True,
                         cwd=root, timeout=60)
    assert run.returncode == 2, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in run.stderr, run.stderr
    assert "'torch', which is not installed: install the train extra: pip install torch==2.13.0 -e '.[train]'" in lines[0]


def test_the_gym_env_uses_only_the_public_api_of_the_aec_env():
    import ast

    import blackout_env.envs.gym_env as gym_env

    tree = ast.parse(open(gym_env.__file__, encoding="utf-8").read())
    private = sorted(
        {
            node.attr
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and (
                (isinstance(node.value, ast.Name) and node.value.id == "aec")
                or (isinstance(node.value, ast.Attribute) and node.value.attr == "_aec")
            )
        }
    )
    assert private == []


def test_a_policy_with_a_spec_seed_copies_and_pickles():
    import copy
    import pickle

    game = BlackoutGame(Rules.preset("standard"), seed=0)
    view = game.view(game.current_player)
    policy = env_policies.load_policy("random:seed=3")
    for twin in (copy.deepcopy(policy), pickle.loads(pickle.dumps(policy))):
        twin.seed(1)
        policy.seed(1)
        assert [twin.act(view) for _ in range(20)] == [policy.act(view) for _ in range(20)]


def test_split_specs_keeps_each_specs_options_with_it():
    from blackout_env.agents.policies import split_specs

    assert split_specs("heuristic, ppo") == ["heuristic", "ppo"]
    assert split_specs("search:samples=64,time_limit_ms=200,heuristic,ppo+search:checkpoint=a.pt,simulations=8") == [
        "search:samples=64,time_limit_ms=200", "heuristic", "ppo+search:checkpoint=a.pt,simulations=8"]


def test_absolute_paths_makes_every_file_a_spec_names_absolute(tmp_path, monkeypatch):
    from blackout_env.agents.policies import absolute_paths, spec_files

    monkeypatch.chdir(tmp_path)
    here = str(tmp_path)
    cases = {
        "ppo:runs/x.pt": f"ppo:{here}/runs/x.pt",
        "ppo+search:checkpoint=x.pt,simulations=800": f"ppo+search:checkpoint={here}/x.pt,simulations=800",
        "ismcts:belief=bids,bid_model=m.npz": f"ismcts:belief=bids,bid_model={here}/m.npz",
        "ppo+search:belief=b.npz": f"ppo+search:belief={here}/b.npz",
        "ppo+rollout:belief=0.5,samples=4": "ppo+rollout:belief=0.5,samples=4",
        "search:samples=64": "search:samples=64",
        "heuristic": "heuristic",
    }
    for spec, absolute in cases.items():
        assert absolute_paths(spec) == absolute, spec
    assert spec_files("ppo+search:checkpoint=x.pt,bid_model=m.npz,belief=bids") == ["x.pt", "m.npz"]
    assert spec_files("ppo:runs/x.pt") == ["runs/x.pt"] and spec_files("ppo+rollout:belief=0.5") == []
