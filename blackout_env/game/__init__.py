"""The reference game in plain Python: cards, rules and presets, rule facts, engine, views, encoders, rendering."""
