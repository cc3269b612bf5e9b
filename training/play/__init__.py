"""The terminal front-end of ``blackout play``: the game loop and saves (:mod:`.session`), and the
screen drawn as text (:mod:`.screen`)."""

from .session import PlaySession, SavedSession, Seat, default_save_path, new_session, read_save, write_save

__all__ = ["PlaySession", "SavedSession", "Seat", "default_save_path", "new_session", "read_save", "write_save"]
