"""The environments: PettingZoo AEC, Gymnasium single-agent and vector, wrappers, and their registered ids."""
