"""Expert iteration (``blackout_training.expert``): ppo+search shards, and distilling them into the network."""

import json

import numpy as np
import pytest

pytest.importorskip("torch")

import torch  # noqa: E402
from blackout_training.agents.policy_net import (  # noqa: E402
    SHIPPED_CHECKPOINT,
    SPECIALIST_CHECKPOINT,
    load_checkpoint,
    load_policy_bot,
)
from blackout_training.cli import main  # noqa: E402
from blackout_training.expert import distill, generate, load_shards, reference_tables  # noqa: E402
from blackout_training.expert.shards import match_rules  # noqa: E402
from blackout_training.ppo.training_seeds import check_held_out_seed, training_seeds  # noqa: E402

from blackout_env import BlackoutGame, Rules  # noqa: E402
from blackout_env.game.universal import UNIVERSAL_NUM_ACTIONS, universal_size  # noqa: E402

# two short hands: a whole match in a second even with the search
SMALL = Rules.preset("standard").replace(hand_sizes=[3, 2])


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    folder = tmp_path_factory.mktemp("expert") / "all"
    result = generate(folder, SMALL, matches=21, simulations=8, decisions="all", seed=3)
    assert result["matches"] == 21 and result["decisions"] > 0
    return folder


def test_a_shard_holds_the_searched_decisions_with_more_than_one_legal_action(shards):
    paths = sorted(shards.glob("*.npz"))
    assert [p.name for p in paths[:2]] == ["seed3-match000000.npz", "seed3-match000001.npz"]
    with np.load(paths[0]) as shard:
        obs, mask, visits, bidding = shard["obs"], shard["mask"], shard["visits"], shard["bidding"]
        meta = json.loads(str(shard["meta"]))
    assert obs.shape[1] == universal_size() and mask.shape[1] == visits.shape[1] == UNIVERSAL_NUM_ACTIONS
    assert (mask.sum(axis=1) > 1).all()
    assert (visits[mask == 0] == 0).all() and (visits.sum(axis=1) == 8).all()  # every simulation starts at the root
    assert bidding.any() and not bidding.all()
    assert Rules.resolve(meta["rules"]) == SMALL and meta["simulations"] == 8 and meta["decisions"] == "all"


def test_a_match_is_the_same_whoever_plays_it(shards, tmp_path):
    generate(tmp_path / "again", SMALL, matches=2, simulations=8, decisions="all", seed=3, workers=2)
    for name in ("seed3-match000000.npz", "seed3-match000001.npz"):
        with np.load(shards / name) as first, np.load(tmp_path / "again" / name) as second:
            for key in ("obs", "mask", "visits", "bidding"):
                assert np.array_equal(first[key], second[key]), key


def test_bids_mode_searches_and_keeps_the_bids_only(tmp_path):
    generate(tmp_path, SMALL, matches=1, simulations=8, decisions="bids", seed=0)
    with np.load(tmp_path / "seed0-match000000.npz") as shard:
        assert shard["bidding"].all() and len(shard["bidding"]) > 0
        assert (shard["mask"][:, :54] == 0).all()


def test_load_shards_holds_out_every_20th_shard_and_filters_the_bids(shards):
    every = load_shards(shards, "all")
    bids = load_shards(shards, "bids")
    assert every["shards"] == 21 and every["rules"] == SMALL
    assert len(every["held_out"][0]) > 0 and len(every["train"][0]) > len(every["held_out"][0])
    assert 0 < len(bids["train"][0]) < len(every["train"][0])
    assert (bids["train"][1][:, 54:] != 0).any(axis=1).all()


def test_distill_moves_the_network_toward_the_search_and_writes_a_universal_policy(shards, tmp_path):
    out = tmp_path / "distilled.pt"
    report = distill(shards, out, decisions="all", epochs=8, lr=3e-3, kl_weight=0.0, reference_decisions=5, batch_size=64)
    assert report["train_decisions"] > 0 and report["reference_decisions"] == 5 * len(reference_tables(SMALL))
    data = load_shards(shards, "all")
    obs, mask, visits = (torch.as_tensor(a) for a in data["train"])
    choice = visits.argmax(dim=1)

    def agreement(model):
        with torch.inference_mode():
            return float((model.logits(obs, mask != 0).argmax(dim=1) == choice).float().mean())

    old, _, _ = load_checkpoint(SHIPPED_CHECKPOINT)
    new, _, payload = load_checkpoint(out)
    assert new.observation == "universal" and payload["extra"]["distilled"]["epochs"] == 8
    before, after = agreement(old), agreement(new)
    assert 1 - after < 0.75 * (1 - before), (before, after)  # a quarter of its disagreement with the search gone
    # and it plays any table legally, as the policy spec ppo:PATH
    bot = load_policy_bot(out, Rules.preset("jokers").replace(num_players=6))
    game = BlackoutGame(Rules.preset("jokers").replace(num_players=6), seed=1, start_round=7)
    while game.phase != "game_over":
        game.step(bot.act(game.view(game.current_player)))


def test_the_kl_term_holds_the_other_tables(shards, tmp_path):
    free = distill(shards, tmp_path / "a.pt", decisions="all", epochs=4, lr=3e-3, kl_weight=0.0, reference_decisions=20)
    held = distill(shards, tmp_path / "b.pt", decisions="all", epochs=4, lr=3e-3, kl_weight=10.0, reference_decisions=20)
    assert held["reference_kl"] < free["reference_kl"]


def test_distill_learns_from_several_folders_and_holds_none_of_their_tables(shards, tmp_path):
    three = Rules.preset("standard").replace(num_players=3)  # a table of the result table: no longer held
    assert three in reference_tables() and SMALL not in reference_tables()
    other = tmp_path / "three"
    generate(other, three, matches=1, simulations=4, seed=1)
    report = distill([shards, other], tmp_path / "o.pt", epochs=1, reference_decisions=2)
    assert report["train_decisions"] == sum(len(load_shards(f, "bids")["train"][0]) for f in (shards, other))
    assert report["reference_decisions"] == 2 * (len(reference_tables()) - 1) == 2 * len(reference_tables([SMALL, three]))
    assert report["data"] == [str(shards), str(other)]
    with pytest.raises(ValueError, match="at least one folder"):
        distill([], tmp_path / "p.pt")


def test_a_run_can_draw_each_matchs_table_from_a_family(shards, tmp_path, capsys):
    folder = tmp_path / "drawn"
    generate(folder, "preset", matches=2, simulations=4, seed=5)
    drawn = [match_rules("preset", 5, index) for index in range(2)]
    assert drawn[0] != drawn[1] and match_rules(SMALL, 5, 0) == SMALL
    for index, rules in enumerate(drawn):
        with np.load(folder / f"seed5-match{index:06d}.npz") as shard:
            meta = json.loads(str(shard["meta"]))
        assert Rules.resolve(meta["rules"]) == rules and meta["drawn"] == "preset"
    data = load_shards(folder, "bids")
    assert data["rules"] is None and {json.dumps(t.to_dict()) for t in data["tables"]} == {json.dumps(t.to_dict()) for t in drawn}
    generate(folder, "preset", matches=1, simulations=4, seed=6)  # another run of the family adds to it
    assert load_shards(folder, "bids")["shards"] == 3 and load_shards(folder, "bids")["drawn_seeds"] == [5, 6]
    # the runs drew tables as training does: their seeds are training seeds of what they are distilled into,
    # and of what is distilled from that in turn (followed back through the network a distillation started from)
    assert distill(folder, tmp_path / "o.pt", epochs=1, reference_decisions=2)["drawn_seeds"] == [5, 6]
    distill(shards, tmp_path / "p.pt", checkpoint=tmp_path / "o.pt", epochs=1, reference_decisions=2)
    seeds = training_seeds(f"ppo:{tmp_path / 'p.pt'}")
    assert any("expert generate --seed of data distilled into" in where for where in seeds[6])
    with pytest.raises(ValueError, match="--held-out-seed 6 is a training seed"):
        check_held_out_seed(6, f"ppo+search:checkpoint={tmp_path / 'p.pt'}")
    assert 6 not in training_seeds()  # not one of the shipped policies' seeds
    with pytest.raises(ValueError, match="holds shards of another table"):  # a fixed table is not the family
        generate(folder, SMALL, matches=1, simulations=4, seed=7)
    fixed = sorted(shards.glob("*.npz"))[0]
    (folder / "seed7-match000000.npz").write_bytes(fixed.read_bytes())  # put there by hand: distill refuses it
    with pytest.raises(ValueError, match="mixes shards of"):
        load_shards(folder, "bids")
    assert main(["expert", "generate", "--out", str(tmp_path / "x"), "--rules", "long-hands", "--players", "3"]) == 2
    assert "--players: the family 'long-hands' draws" in capsys.readouterr().err and not (tmp_path / "x").exists()


def test_bad_input_is_refused_with_a_clear_error(shards, tmp_path):
    with pytest.raises(ValueError, match="already holds shards of seed 3"):
        generate(shards, SMALL, matches=1, simulations=8, seed=3)
    with pytest.raises(ValueError, match="rules-sized observation"):
        generate(tmp_path / "x", SMALL, matches=1, checkpoint=SPECIALIST_CHECKPOINT)
    assert not (tmp_path / "x").exists()
    for kwargs, message in (
        ({"matches": 0}, "matches"), ({"simulations": 1.5}, "simulations"), ({"decisions": "plays"}, "decisions"),
        ({"minutes": -1}, "minutes"), ({"seed": -2}, "seed"), ({"workers": 0}, "workers"),
    ):
        with pytest.raises(ValueError, match=message):
            generate(tmp_path / "y", SMALL, **kwargs)
    with pytest.raises(ValueError, match="no folder"):
        distill(tmp_path / "missing", tmp_path / "o.pt")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="holds no shards"):
        distill(tmp_path / "empty", tmp_path / "o.pt")
    for kwargs, message in (({"temperature": 0}, "temperature"), ({"epochs": 0}, "epochs"), ({"kl_weight": -1}, "kl_weight")):
        with pytest.raises(ValueError, match=message):
            distill(shards, tmp_path / "o.pt", **kwargs)
    with pytest.raises(ValueError, match="rules-sized observation"):
        distill(shards, tmp_path / "o.pt", checkpoint=SPECIALIST_CHECKPOINT, reference_decisions=1)
    assert not (tmp_path / "o.pt").exists()


def test_a_corrupt_or_foreign_shard_is_named(shards, tmp_path):
    folder = tmp_path / "bad"
    folder.mkdir()
    good = sorted(shards.glob("*.npz"))[0]
    (folder / good.name).write_bytes(good.read_bytes())
    (folder / "seed9-match000000.npz").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="seed9-match000000.npz.*not a shard of blackout expert generate: not an .npz archive$"):
        load_shards(folder, "all")
    with np.load(good) as shard:
        arrays = {key: shard[key] for key in shard.files}
    np.savez(folder / "seed9-match000000.npz", **{**arrays, "visits": -arrays["visits"]})
    with pytest.raises(ValueError, match="seed9-match000000.npz.*negative"):
        load_shards(folder, "all")
    np.savez(folder / "seed9-match000000.npz", **{**arrays, "obs": arrays["obs"][:, :10]})
    with pytest.raises(ValueError, match="seed9-match000000.npz.*wrong shapes"):
        load_shards(folder, "all")
    other = json.dumps({**json.loads(str(arrays["meta"])), "rules": Rules.preset("short").to_dict()})
    np.savez(folder / "seed9-match000000.npz", **{**arrays, "meta": np.array(other)})
    with pytest.raises(ValueError, match="mixes shards of 2 tables"):
        load_shards(folder, "all")
    (folder / "seed9-match000000.npz").write_bytes(good.read_bytes()[: good.stat().st_size // 2])  # cut short
    with pytest.raises(ValueError, match="seed9-match000000.npz.*not a shard of blackout expert generate"):
        load_shards(folder, "all")
    for change in ({"obs": arrays["obs"].astype(str)}, {"obs": np.array(1.0)}, {"bidding": arrays["bidding"] * 1.5}):
        np.savez(folder / "seed9-match000000.npz", **{**arrays, **change})  # (each was a traceback)
        with pytest.raises(ValueError, match="seed9-match000000.npz.*not arrays of numbers, or its bidding not of booleans"):
            load_shards(folder, "all")
    np.savez(folder / "seed9-match000000.npz", **{**arrays, "mask": arrays["mask"] * 0.5})
    with pytest.raises(ValueError, match="a mask that is not 0 or 1"):
        load_shards(folder, "all")
    (folder / good.name).unlink()  # one shard, whose rules are not rules
    broken = json.dumps({**json.loads(str(arrays["meta"])), "rules": {"num_players": 99}})
    np.savez(folder / "seed9-match000000.npz", **{**arrays, "meta": np.array(broken)})
    with pytest.raises(ValueError, match="a shard's rules are not valid rules .*num_players"):
        load_shards(folder, "all")


def test_generate_refuses_a_folder_of_another_tables_shards(shards, tmp_path):
    before = sorted(p.name for p in shards.iterdir())
    for other in (Rules.preset("short"), "long-hands"):
        with pytest.raises(ValueError, match="holds shards of another table"):
            generate(shards, other, matches=1, simulations=8, seed=4)
    assert sorted(p.name for p in shards.iterdir()) == before


def test_the_command_line_runs_both_steps_and_refuses_bad_input(tmp_path, capsys):
    data = tmp_path / "d"
    assert main(["expert", "generate", "--out", str(data), "--rules", "standard", "--players", "3", "--matches", "1",
                 "--simulations", "4", "--seed", "1"]) == 0
    assert sorted(p.name for p in data.iterdir()) == ["seed1-match000000.npz"]
    assert main(["expert", "generate", "--out", str(data), "--matches", "1", "--seed", "1"]) == 2
    assert "already holds shards of seed 1" in capsys.readouterr().err
    out = tmp_path / "p.pt"
    assert main(["expert", "distill", "--data", str(data), "--out", str(out), "--epochs", "1",
                 "--reference-decisions", "2"]) == 0
    assert out.exists()
    assert main(["expert", "distill", "--data", str(tmp_path / "none"), "--out", str(out)]) == 2
    assert "no folder" in capsys.readouterr().err


@pytest.mark.parametrize("option, value, message", [
    ("lr", 2.0, r"lr: must be a number in \(0, 1\]"),
    ("kl_weight", float("inf"), "kl_weight: must be a finite number >= 0"),
    ("seed", -1, "seed: must be a whole number >= 0"),
    ("threads", 100_000, "threads: a whole number of threads 1..1024"),
])
def test_distill_names_a_bad_option_before_reading_anything(tmp_path, option, value, message):
    with pytest.raises(ValueError, match=message):
        distill(tmp_path / "no-shards", tmp_path / "out.pt", **{option: value})
    assert not (tmp_path / "out.pt").exists()


def test_a_distillation_that_diverges_is_not_written(shards, tmp_path, diverging_adam):
    with pytest.raises(ValueError, match="the training diverged"):
        distill(shards, tmp_path / "out.pt", epochs=1, reference_decisions=5, batch_size=64)
    assert not (tmp_path / "out.pt").exists()
