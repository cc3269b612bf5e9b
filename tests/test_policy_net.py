"""The actor-critic network, its checkpoints, and trained policies acting as bots."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from blackout_training.agents.policies import load_policy
from blackout_training.agents.policy_net import (
    ActorCritic,
    CheckpointError,
    PolicyBot,
    export_policy,
    load_checkpoint,
    load_policy_bot,
    make_model,
    masked_logits,
    read_checkpoint,
    save_checkpoint,
)
from blackout_training.cli import main

from blackout_env import BlackoutGame, Rules
from blackout_env.game import encoding

SHORT = Rules.preset("short")


def small_net(rules: Rules = SHORT, seed: int = 0) -> ActorCritic:
    torch.manual_seed(seed)
    return ActorCritic(encoding.observation_size(rules), rules.num_actions, [16, 16])


def test_masked_sampling_never_yields_an_illegal_action():
    net = small_net()
    generator = np.random.default_rng(0)
    obs = torch.from_numpy(generator.random((512, net.observation_size), dtype=np.float32))
    mask = torch.from_numpy(generator.random((512, net.num_actions)) < 0.1)
    mask[torch.arange(512), torch.from_numpy(generator.integers(net.num_actions, size=512))] = True
    # Large logits for illegal actions must not leak through the mask.
    with torch.no_grad():
        net.actor.bias.copy_(torch.where(mask[0], -50.0, 50.0))
    for _ in range(20):
        action, logprob, entropy, _ = net.get_action_and_value(obs, mask)
        assert mask[torch.arange(512), action].all()
        assert torch.isfinite(logprob).all() and torch.isfinite(entropy).all()
    assert mask[torch.arange(512), net.greedy_action(obs, mask)].all()


def test_an_illegal_action_has_probability_zero():
    logits = torch.zeros(1, 4)
    probs = torch.softmax(masked_logits(logits, torch.tensor([[True, False, True, False]])), dim=-1)
    assert probs[0, 1] == 0 and probs[0, 3] == 0 and torch.isclose(probs.sum(), torch.tensor(1.0))


@pytest.mark.parametrize("greedy", [True, False])
def test_policy_bot_plays_only_legal_actions_through_whole_matches(greedy):
    bot = PolicyBot(small_net(), SHORT, greedy=greedy, seed=3)
    for seed in range(3):
        game = BlackoutGame(SHORT, seed=seed)
        while not game.is_over:
            action = bot.act(game.view(game.current_player))
            assert action in game.legal_actions()
            game.step(action)


def test_one_view_is_decided_on_one_torch_thread_and_the_setting_restored(monkeypatch):
    bot = PolicyBot(small_net(), SHORT, seed=3)
    seen = []
    logits, logits_and_value = bot.model.logits, bot.model.logits_and_value
    monkeypatch.setattr(bot.model, "logits", lambda *a: (seen.append(torch.get_num_threads()), logits(*a))[1])
    monkeypatch.setattr(bot.model, "logits_and_value",
                        lambda *a: (seen.append(torch.get_num_threads()), logits_and_value(*a))[1])
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        game = BlackoutGame(SHORT, seed=0)
        view = game.view(game.current_player)
        bot.act(view), bot.action_probabilities(view), bot.explain(view)
        assert seen == [1, 1, 1] and torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(threads)


def test_sampling_bot_is_reproducible_for_a_seed():
    def moves(seed):
        bot = PolicyBot(small_net(), SHORT, greedy=False, seed=seed)
        game = BlackoutGame(SHORT, seed=1)
        out = []
        while not game.is_over:
            out.append(bot.act(game.view(game.current_player)))
            game.step(out[-1])
        return out

    assert moves(5) == moves(5)


def test_checkpoint_round_trip_keeps_the_network(tmp_path):
    net = small_net()
    path = save_checkpoint(tmp_path / "net.pt", net, SHORT, extra={"update": 7})
    loaded, rules, payload = load_checkpoint(path, "short")
    assert rules == SHORT and payload["extra"]["update"] == 7
    obs = torch.rand(8, net.observation_size)
    assert torch.equal(net.get_value(obs), loaded.get_value(obs))
    assert not list(tmp_path.glob(".*tmp")), "the temporary file is renamed, not left behind"


def test_a_failed_save_leaves_the_old_checkpoint_whole(tmp_path, monkeypatch):
    path = save_checkpoint(tmp_path / "net.pt", small_net(), SHORT)
    before = path.read_bytes()

    def save_half_then_fail(payload, file):
        file.write(b"half a checkpoint")
        raise OSError("disk full")

    monkeypatch.setattr(torch, "save", save_half_then_fail)
    with pytest.raises(OSError, match="disk full"):
        save_checkpoint(path, small_net(seed=1), SHORT)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["net.pt"]


def test_a_missing_checkpoint_is_a_clear_error(tmp_path):
    with pytest.raises(CheckpointError, match="does not exist"):
        load_checkpoint(tmp_path / "nope.pt")


def test_a_corrupt_checkpoint_is_a_clear_error(tmp_path):
    path = tmp_path / "broken.pt"
    path.write_bytes(b"\x00not a torch file at all" * 10)
    with pytest.raises(CheckpointError, match="is not a torch checkpoint"):
        load_checkpoint(path)


def _damaged(tmp_path, kind):
    path = tmp_path / "notes.pt"
    if kind == "text":
        path.write_text("not a checkpoint\n")
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "folder":
        path.mkdir()
    else:  # a real checkpoint, cut short
        model = make_model(Rules.preset("short"), [8])
        save_checkpoint(tmp_path / "whole.pt", model, Rules.preset("short"))
        path.write_bytes((tmp_path / "whole.pt").read_bytes()[:2000])
    return path


@pytest.mark.parametrize(
    "kind, problem",
    [
        ("text", "is not a torch checkpoint"),
        ("empty", "is empty"),
        ("folder", "is a folder, not a checkpoint file"),
        ("truncated", "is not a torch checkpoint"),
    ],
)
def test_a_damaged_checkpoint_is_one_line_naming_the_file_and_the_problem(tmp_path, capsys, kind, problem):
    path = _damaged(tmp_path, kind)
    assert main(["eval", "--policies", f"ppo:{path}", "random", "--deals", "2", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(path) in err and problem in err, err
    assert "weights_only" not in err and "issue" not in err.lower()


def test_a_checkpoint_whose_weights_were_damaged_in_place_is_refused_by_their_checksum(tmp_path):
    # torch reads a zip checkpoint without checking its CRCs: flipped bytes inside a tensor loaded as weights.
    import zipfile

    path = save_checkpoint(tmp_path / "net.pt", small_net(), SHORT)
    with zipfile.ZipFile(path) as archive:
        member = max(archive.infolist(), key=lambda info: info.file_size)  # the largest tensor's bytes
    data = bytearray(path.read_bytes())
    start = member.header_offset + 30 + len(member.filename.encode()) + len(member.extra) + member.file_size // 2
    data[start : start + 16] = bytes(b ^ 0x5A for b in data[start : start + 16])
    path.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match=f"is corrupt: its part '{member.filename}' fails its checksum"):
        load_checkpoint(path)


def test_a_checkpoint_cut_anywhere_is_called_truncated_not_an_input_output_error(tmp_path):
    save_checkpoint(tmp_path / "whole.pt", make_model(Rules.preset("short"), [64, 64]), Rules.preset("short"))
    whole = (tmp_path / "whole.pt").read_bytes()
    cut = tmp_path / "cut.pt"
    for length in range(1, len(whole), max(1, len(whole) // 60)):
        cut.write_bytes(whole[:length])
        with pytest.raises(CheckpointError, match="is not a torch checkpoint"):
            read_checkpoint(cut)


def test_a_torch_file_that_is_not_a_policy_is_refused(tmp_path):
    path = tmp_path / "other.pt"
    torch.save({"weights": torch.zeros(3)}, path)
    with pytest.raises(CheckpointError, match="not a Blackout PPO checkpoint"):
        load_checkpoint(path)


def test_a_checkpoint_for_other_rules_is_refused_naming_the_difference(tmp_path):
    path = save_checkpoint(tmp_path / "net.pt", small_net(), SHORT)
    with pytest.raises(CheckpointError, match="other rules.*hand_sizes"):
        load_checkpoint(path, "standard")
    with pytest.raises(CheckpointError, match="other rules.*hook"):
        load_policy_bot(path, SHORT.replace(hook=False))


def test_a_checkpoint_that_wrote_full_as_a_word_loads_for_the_same_rules(tmp_path):
    full_deck = Rules.preset("full-deck")
    path = save_checkpoint(tmp_path / "net.pt", small_net(full_deck), full_deck)
    payload = torch.load(path, weights_only=True)
    payload["rules"]["max_hand_size"] = "full"  # as checkpoints wrote it before "full" was kept as its number
    torch.save(payload, path)
    assert load_checkpoint(path, "full-deck")[1] == full_deck


def test_a_checkpoint_with_another_observation_layout_is_refused(tmp_path):
    path = save_checkpoint(tmp_path / "net.pt", small_net(), SHORT)
    payload = torch.load(path, weights_only=True)
    payload["observation_layout"] = payload["observation_layout"][:-1]  # as if written by an older encoder
    torch.save(payload, path)
    with pytest.raises(CheckpointError, match="another observation layout"):
        load_checkpoint(path, SHORT)


def test_load_policy_bot_names_the_policy_by_its_path(tmp_path):
    path = save_checkpoint(tmp_path / "net.pt", small_net(), SHORT)
    bot = load_policy_bot(path, SHORT, seed=0)
    assert bot.name == f"ppo:{path}"
    game = BlackoutGame(SHORT, seed=0)
    assert bot.act(game.view(game.current_player)) in game.legal_actions()


def test_export_keeps_the_network_and_drops_the_training_state(tmp_path):
    net = small_net()
    optimizer = torch.optim.Adam(net.parameters())
    net.get_value(torch.rand(4, net.observation_size)).sum().backward()
    optimizer.step()
    source = save_checkpoint(
        tmp_path / "run.pt", net, SHORT, extra={"optimizer_state": optimizer.state_dict(), "global_step": 99}
    )
    small = export_policy(source, tmp_path / "ship.pt")
    model, rules, payload = load_checkpoint(small, SHORT)
    assert "optimizer_state" not in payload["extra"] and payload["extra"]["global_step"] == 99
    assert small.stat().st_size < source.stat().st_size
    obs = torch.rand(3, net.observation_size)
    assert torch.equal(model.get_value(obs), net.get_value(obs))


def test_the_shipped_specialist_loads_by_name_plays_legal_standard_moves_and_refuses_other_rules():
    bot = load_policy("ppo-standard", "standard", seed=0)
    assert bot.name == "ppo-standard"
    game = BlackoutGame("standard", seed=11)
    while game.round_index < 2:
        action = bot.act(game.view(game.current_player))
        assert action in game.legal_actions()
        game.step(action)
    with pytest.raises(CheckpointError, match="other rules"):
        load_policy("ppo-standard", "short")


@pytest.mark.timeout(300)
def test_a_checkpoint_policy_plays_in_forked_evaluation_workers(tmp_path):
    from blackout_training.evaluation.tournament import evaluate

    path = save_checkpoint(tmp_path / "net.pt", small_net(), SHORT)
    torch.rand(256, 256) @ torch.rand(256, 256)  # the parent has used torch's thread pool before forking
    result = evaluate([f"ppo:{path}", "random"], rules=SHORT, deals=2, seed=0, workers=2)
    assert result.stats(f"ppo:{path}").hands > 0


def test_a_checkpoint_from_before_the_cards_network_still_loads(tmp_path):
    # Earlier checkpoints named the MLP trunk "trunk" and had no "arch" field.
    net = small_net()
    path = save_checkpoint(tmp_path / "old.pt", net, SHORT)
    payload = torch.load(path, weights_only=True)
    payload["model_state"] = {k.replace("trunk_mlp.", "trunk."): v for k, v in payload["model_state"].items()}
    del payload["arch"], payload["card_width"]
    torch.save(payload, path)
    loaded, _, _ = load_checkpoint(path, "short")
    obs = torch.rand(4, net.observation_size)
    assert loaded.arch == "mlp" and torch.equal(loaded.logits(obs), net.logits(obs))


def test_the_policy_is_the_masked_categorical_and_samples_its_draws():
    # get_action_and_value computes the masked categorical by log_softmax/softmax (Categorical's logsumexp is slow
    # on -1e9 logits); the probabilities, log-probabilities, entropy and even the sampled actions for a given
    # generator state must be those of torch.distributions.Categorical.
    from torch.distributions import Categorical

    rules = Rules.preset("standard")
    torch.manual_seed(4)
    net = make_model(rules, [32], arch="cards", card_width=8)
    generator = np.random.default_rng(1)
    obs = torch.from_numpy(generator.random((300, net.observation_size), dtype=np.float32).round())
    mask = torch.from_numpy(generator.random((300, net.num_actions)) < 0.2)
    mask[torch.arange(300), torch.from_numpy(generator.integers(net.num_actions, size=300))] = True
    with torch.no_grad():
        dist = Categorical(logits=net.logits(obs, mask))
        torch.manual_seed(9)
        expected = dist.sample()
        torch.manual_seed(9)
        action, logprob, entropy, value = net.get_action_and_value(obs, mask)
        torch.manual_seed(9)
        sampled, sampled_logprob, sampled_value = net.sample_action(obs, mask)
    assert torch.equal(action, expected) and torch.equal(sampled, expected)
    assert torch.allclose(logprob, dist.log_prob(expected), atol=1e-5)
    assert torch.equal(sampled_logprob, logprob) and torch.equal(sampled_value, value)
    assert torch.allclose(entropy, dist.entropy(), atol=1e-5)
    assert torch.allclose(value, net.get_value(obs))
    scored = net.get_action_and_value(obs, mask, expected)
    assert torch.allclose(scored[1], dist.log_prob(expected), atol=1e-5)
    scored[1].sum().backward()  # the scored log-probabilities carry gradients to the weights
    assert net.card_query.weight.grad is not None and torch.isfinite(net.card_query.weight.grad).all()


def test_sparse_rows_hold_every_nonzero_entry_and_refuse_a_narrow_width():
    from blackout_training.agents.policy_net import sparse_rows

    generator = np.random.default_rng(2)
    obs = (generator.random((40, 30)) < 0.2) * generator.random((40, 30)).astype(np.float32)
    obs[3] = 0.0  # a row without any nonzero entry
    rows = sparse_rows(obs)
    assert rows.columns.shape == rows.values.shape == (40, int((obs != 0).sum(axis=1).max()))
    rebuilt = torch.zeros(40, 30).scatter_add_(1, rows.columns, rows.values)
    assert torch.equal(rebuilt, torch.from_numpy(obs.astype(np.float32)))
    assert sparse_rows(obs, width=rows.columns.shape[1] + 4).values[:, -4:].eq(0).all()
    with pytest.raises(ValueError, match="more than width=1"):
        sparse_rows(obs, width=1)
    with pytest.raises(ValueError, match="expected a \\(batch, size\\) array"):
        sparse_rows(obs[0])


@pytest.mark.parametrize("arch", ["mlp", "cards"])
def test_the_network_on_sparse_observations_is_the_network_on_dense_ones(arch):
    # The trainer feeds the first layer the observations' nonzero entries (CPU); values and gradients must be
    # those of the dense observations up to float rounding.
    from blackout_training.agents.policy_net import sparse_rows

    rules = Rules.preset("standard")
    torch.manual_seed(5)
    net = make_model(rules, [64, 32], arch=arch, card_width=8)
    generator = np.random.default_rng(3)
    obs = ((generator.random((64, net.observation_size)) < 0.05) * 1.0).astype(np.float32)
    obs[:, :52] = 0.0
    for row in range(64):  # a hand of 1..10 cards, so the "cards" network has cards to embed
        obs[row, generator.choice(52, size=1 + row % 10, replace=False)] = 1.0
    mask = torch.from_numpy(obs[:, : net.num_actions] != 0)
    mask[:, -1] = True
    obs_t, rows = torch.from_numpy(obs), sparse_rows(obs)
    actions = net.greedy_action(obs_t, mask)
    dense = net.get_action_and_value(obs_t, mask, actions)
    sparse = net.get_action_and_value(None if arch == "mlp" else obs_t, mask, actions, sparse=rows)
    for a, b in zip(dense, sparse):
        assert torch.allclose(a.float(), b.float(), atol=1e-5)
    grads = []
    for out in (dense, sparse):
        net.zero_grad()
        (out[1].sum() + out[2].sum() + out[3].sum()).backward()
        grads.append([p.grad.clone() for p in net.parameters()])
    for a, b in zip(*grads):
        assert torch.allclose(a, b, atol=1e-4, rtol=1e-4)


def test_the_sparse_first_layer_follows_every_change_of_the_weights_while_acting():
    # While acting (no gradients) the transposed first-layer weight is kept from step to step; it must be
    # recomputed after an optimizer step or a load_state_dict, or the policy would act with stale weights.
    from blackout_training.agents.policy_net import sparse_linear, sparse_rows

    torch.manual_seed(6)
    layer = torch.nn.Linear(12, 5)
    obs = np.eye(12, dtype=np.float32)[:7] * 2.0
    rows = sparse_rows(obs)
    optimizer = torch.optim.SGD(layer.parameters(), lr=0.5)
    for change in ("optimizer", "load_state_dict", "no_grad copy"):
        with torch.inference_mode():
            assert torch.allclose(sparse_linear(rows, layer), layer(torch.from_numpy(obs)), atol=1e-6)
        if change == "optimizer":
            optimizer.zero_grad()
            sparse_linear(rows, layer).sum().backward()
            optimizer.step()
        elif change == "load_state_dict":
            layer.load_state_dict({"weight": torch.randn(5, 12), "bias": torch.randn(5)})
        else:
            with torch.no_grad():
                layer.weight.mul_(-1.0)
        with torch.no_grad():
            assert torch.allclose(sparse_linear(rows, layer), layer(torch.from_numpy(obs)), atol=1e-6), change


def test_resetting_the_bid_head_makes_the_bids_near_uniform_and_keeps_the_card_play():
    rules = Rules.preset("standard")
    with pytest.raises(ValueError, match="reset_bid_head: an 'mlp' network has no bid head"):
        make_model(rules, [16], arch="mlp").reset_bid_head()
    model = make_model(rules, [16], arch="cards", card_width=4)
    with torch.no_grad():
        model.actor.bias[-8] += 20.0  # a collapsed policy: bid 3 (of 0..10) always
    game = BlackoutGame(rules, seed=0)
    bid_obs = torch.as_tensor(encoding.encode(game.view(game.current_player)))[None]
    while game.phase == "bid":
        game.step(game.legal_actions()[0])
    card_obs = torch.as_tensor(encoding.encode(game.view(game.current_player)))[None]
    cards_before, value_before = model.logits(card_obs)[0, :52].clone(), model.get_value(card_obs).clone()
    assert torch.softmax(model.logits(bid_obs)[0, 52:], -1).max() > 0.9
    model.reset_bid_head()
    bids = torch.softmax(model.logits(bid_obs)[0, 52:], -1)
    assert bids.max() < 1.5 / len(bids)
    torch.testing.assert_close(model.logits(card_obs)[0, :52], cards_before)
    torch.testing.assert_close(model.get_value(card_obs), value_before)


def _nan_weights(payload):
    name = next(iter(payload["model_state"]))
    payload["model_state"][name] = torch.full_like(payload["model_state"][name], float("nan"))


@pytest.mark.parametrize("edit, problem", [
    (lambda p: p.update(hidden_sizes=[8, 8]), r"holds no usable network: Error\(s\) in loading state_dict for ActorCritic: size mismatch .*\(and \d+ more\)$"),
    (lambda p: p.update(arch="lstm"), "holds no usable network: arch: must be one of"),
    (lambda p: p.update(model_state=[1, 2]), "holds no usable network"),
    (lambda p: p.update(observation_layout=5), "reads another observation layout"),
    (lambda p: p.update(observation_layout=[1, 2]), "reads another observation layout"),
    (_nan_weights, "holds no usable network: its weights '.*' are not finite"),
])
def test_a_checkpoint_whose_network_does_not_fit_its_weights_is_one_line_naming_it(tmp_path, capsys, edit, problem):
    path = save_checkpoint(tmp_path / "net.pt", small_net(), SHORT)
    payload = torch.load(path, weights_only=False)
    edit(payload)
    torch.save(payload, path)
    with pytest.raises(CheckpointError, match=problem) as error:
        load_checkpoint(path)
    assert "\n" not in str(error.value) and str(path) in str(error.value)
