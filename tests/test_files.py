"""Files written whole or not at all (training/files.py)."""

from __future__ import annotations

import os
import stat

import pytest
from blackout_training.files import replaced_atomically, write_text_atomically


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_a_new_file_follows_the_umask_and_an_existing_one_keeps_its_permissions(tmp_path):
    old = os.umask(0o077)
    try:
        write_text_atomically(tmp_path / "new.txt", "a")
    finally:
        os.umask(old)
    assert _mode(tmp_path / "new.txt") == 0o600
    kept = tmp_path / "kept.txt"
    kept.write_text("old")
    os.chmod(kept, 0o640)
    write_text_atomically(kept, "new")
    assert kept.read_text() == "new" and _mode(kept) == 0o640
    write_text_atomically(tmp_path / "private.json", "{}", mode=0o600)
    assert _mode(tmp_path / "private.json") == 0o600


def test_a_link_is_written_through_and_a_failed_write_leaves_the_file_and_no_temporary_one(tmp_path):
    target, link = tmp_path / "real.txt", tmp_path / "link.txt"
    target.write_text("old")
    link.symlink_to(target)
    write_text_atomically(link, "new")
    assert link.is_symlink() and target.read_text() == "new"
    with pytest.raises(RuntimeError), replaced_atomically(target) as file:
        file.write("half")
        raise RuntimeError("stopped")
    assert target.read_text() == "new" and sorted(p.name for p in tmp_path.iterdir()) == ["link.txt", "real.txt"]
