"""Helpers shared by the engine tests."""


def snapshot(game):
    """Everything observable about a game, for before/after comparisons."""
    return (
        game.to_json(),
        [game.view(p) for p in range(game.num_players)],
        list(game.history),
        game.legal_actions(),
        [list(h) for h in game.hands],
        game.phase,
        game.current_player,
    )
