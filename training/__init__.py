"""Training, evaluation and command-line tools for Blackout RL (imports torch only where needed)."""
