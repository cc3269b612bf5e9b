"""Rule-based bots that play Blackout from a player's view."""
