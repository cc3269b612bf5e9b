"""Ray for the trainers: import it with a one-line install hint, join a cluster or start one here.

The native trainer's samplers on Ray (``algo: ppo_ray``, :mod:`.ray_samplers`) and the RLlib backend
(:mod:`blackout_training.rllib.backend`) both connect through :func:`connect_ray`.
"""

from __future__ import annotations

import os
import socket
from typing import Any

from .config import ConfigError

__all__ = ["INSTALL_HINT", "connect_ray", "import_ray", "import_rllib"]

INSTALL_HINT = 'pip install "blackout-rl[rllib]"  (Ray RLlib 2.60; or: pip install "ray[rllib]==2.60.0")'
CONNECT_TIMEOUT_S = 5.0


def import_rllib(what: str = "algo rllib_ppo") -> Any:
    """The ``ray`` module, with RLlib importable; a one-line ConfigError naming ``what`` needs it and the install command otherwise."""
    try:
        import ray
        import ray.rllib  # noqa: F401
    except ImportError as error:
        raise ConfigError(f"{what} needs Ray RLlib, which is not installed ({error}): {INSTALL_HINT}") from None
    return ray


def import_ray(what: str) -> Any:
    """The ``ray`` module (Ray core only); a one-line ConfigError naming ``what`` needs it and the install command otherwise."""
    try:
        import ray
    except ImportError as error:
        raise ConfigError(f"{what} needs Ray, which is not installed ({error}): {INSTALL_HINT}") from None
    return ray


_ADDRESS = "Ray address (--ray-address, ray.address or rllib.address)"


def _check_reachable(address: str) -> None:
    """Fail within seconds when nothing answers at HOST:PORT (``ray.init`` would retry for minutes)."""
    target = address.split("://", 1)[-1]
    host, sep, port = target.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ConfigError(f"{_ADDRESS} {address!r}: expected HOST:PORT (e.g. 10.0.0.5:6379, as ray start --head prints) or auto")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S):
            pass
    except OSError as error:
        reason = "timed out" if isinstance(error, TimeoutError) else (error.strerror or str(error))
        raise ConfigError(
            f"{_ADDRESS} {address!r}: no Ray cluster answers there ({reason}; waited at most {CONNECT_TIMEOUT_S:.0f} s); "
            "start one with `ray start --head` on the head node, or leave the address out to run Ray here"
        ) from None


def connect_ray(address: str | None, num_cpus: int, what: str = "algo rllib_ppo", needs_rllib: bool = True) -> bool:
    """Join the Ray cluster at ``address`` or start Ray here; True when this call started (and owns) it.

    A Ray already initialised in this process (e.g. by a notebook or a test) is used as it is. ``what``
    names the part that needs Ray (RLlib too, with ``needs_rllib``) in the message when it is missing.
    """
    ray = import_rllib(what) if needs_rllib else import_ray(what)
    if ray.is_initialized():
        return False
    if address is not None:
        if address != "auto":
            _check_reachable(address)
        # Something that answers at the port but is no Ray (or refuses our token) makes ray.init retry for
        # 20 s; 5 tries are plenty for a live cluster (an operator's own setting is kept).
        wait_key = "RAY_gcs_server_port_wait_time_s"
        saved_wait = os.environ.get(wait_key)
        os.environ.setdefault(wait_key, "5")
        try:
            ray.init(address=address, log_to_driver=False)
        except (ConnectionError, RuntimeError, ValueError) as error:
            hint = ("" if os.environ.get("RAY_AUTH_MODE") else
                    "; if the cluster uses token authentication (the default of `ray start` from Ray 2.59 on), set "
                    "RAY_AUTH_MODE=token, and RAY_AUTH_TOKEN to the token `ray get-auth-token` prints on the head node")
            raise ConfigError(f"{_ADDRESS} {address!r}: cannot join the Ray cluster: {error}{hint}") from None
        finally:
            if saved_wait is None:
                os.environ.pop(wait_key, None)
        return True
    # address="local": a new Ray for this run, even where another Ray runs on this machine (plain ray.init() would
    # join that one, and refuse num_cpus).
    # Ray nices its worker processes to 15, so beside any other busy process its samplers and env runners got a
    # few percent of a core (ppo_ray's rollout fell to 0.02x beside two busy loops): the workers of a Ray started
    # here run at this process's priority, as the native trainer does (an operator's own setting is kept).
    niceness_key = "RAY_worker_niceness"
    saved_niceness = os.environ.get(niceness_key)
    os.environ.setdefault(niceness_key, "0")
    try:
        ray.init(address="local", num_cpus=num_cpus, include_dashboard=False, log_to_driver=False)
    finally:
        if saved_niceness is None:
            os.environ.pop(niceness_key, None)
    return True


FREE_CPU_WAIT_S = 5.0
"""How long a run waits for CPUs an earlier run's actors may still be giving back."""


def free_cpus_for(need: float, address: str | None, owned: bool, option: str, advice: str) -> None:
    """Wait up to :data:`FREE_CPU_WAIT_S` for ``need`` free CPUs in the connected Ray; else a ConfigError naming
    ``option`` (the words before the advice: what asks for them) and where the CPUs were looked for. Ray would
    otherwise wait for ever for actors it cannot place, with no word."""
    import time

    import ray

    free = ray.available_resources().get("CPU", 0.0)
    deadline = time.monotonic() + FREE_CPU_WAIT_S
    while need > free + 1e-9 and time.monotonic() < deadline:
        time.sleep(0.2)
        free = ray.available_resources().get("CPU", 0.0)
    if need > free + 1e-9:
        where = ("the Ray started here" if owned else f"the Ray cluster at {address!r}" if address is not None else
                 "the Ray this process is connected to")
        raise ConfigError(f"{option} need {need:g} CPUs, but {where} has {free:g} free; {advice}")
