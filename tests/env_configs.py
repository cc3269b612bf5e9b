"""Rule sets every environment test runs over (keyword arguments of the envs)."""

CONFIGS = {
    "standard": {},
    "3 players": {"rules": {"num_players": 3, "hand_sizes": [6, 3, 1]}},
    "5 players": {"rules": {"num_players": 5, "hand_sizes": [5, 2]}},
    "7 players": {"rules": {"num_players": 7, "hand_sizes": [7, 3]}},
    "hook off": {"rules": "no-hook"},
    "trump must break": {"rules": {"lead_trump": "broken", "hand_sizes": [8, 4]}},
    "jokers": {"rules": {"jokers": 2, "hand_sizes": [9, 4]}},
    "full deck, no-trump round": {"rules": {"hand_sizes": [13, 3]}},
    "episode = hand": {"episode": "hand"},
}
