"""Policies by name: the spec grammar and the registry of loaders, for every place that names a policy.

The Gym env's opponents, evaluation (``blackout eval --policies``), training
opponents and ``blackout play --bots`` all resolve names here, so a spec that
works in one works in all.

Specs
-----
``NAME`` or ``NAME:ARGUMENT``; the part before the first colon picks a loader.

- ``random``, ``heuristic``, ``search``, ``ismcts``: the baseline bots
  (``blackout_baselines``); the argument is ``key=value`` options separated by
  commas, passed to the bot (``search:samples=64,time_limit_ms=200``). Values
  that read as numbers become numbers.
- ``ppo``: the generalist shipped with the package, one network for every
  rules set at 3 to 7 players; ``ppo-standard``: the shipped standard 4-player
  specialist (it refuses other rules); ``ppo:PATH``: a trained checkpoint
  (the training package, needs torch).
- ``ppo+search``: IS-MCTS guided at the root by the shipped ``ppo`` policy (so it
  plays every table too; needs torch); options
  as ``ismcts``'s, plus ``prior_weight`` and ``checkpoint=PATH``; ``ppo+search-deep``: the same at
  ``simulations=1600,endgame=3``, the strongest bot shipped (docs/ismcts.md).
- ``ppo+rollout``: the shipped ``ppo`` policy with its bids (``phases=cards``: its
  card plays; ``phases=all``: both) chosen by sampled deals played out by the network itself
  (needs torch); options ``samples``,
  ``phases``, ``card_samples``, ``margin``, ``belief`` and ``checkpoint=PATH``.
- ``rllib:PATH``: a policy trained on Ray RLlib (``blackout train`` with
  ``algo: rllib_ppo``): its run folder or RLlib checkpoint (needs the ``rllib`` extra).
- ``openspiel_ismcts``: OpenSpiel's IS-MCTS deciding from states redealt from the view, the
  player of the OpenSpiel cross-check, an external anchor (needs the ``bench`` extra); options
  ``simulations``, ``uct_c``, ``rollout_seed`` and ``redeals``; standard-style tables only
  (3 to 7 players, a turned trump, the hook).

Seeds. ``load_policy(spec, seed=s)`` seeds the policy with ``s``; a ``seed``
option in the spec (``random:seed=3``) wins over ``s``. Evaluation, play and
the Gym env reseed their policies before every match (or decision) from their
own seed so that results do not depend on worker processes; a policy whose
spec fixes a seed mixes that seed into every reseed, so ``random:seed=3`` and
``random:seed=4`` play differently, each reproducibly.

Policies. A policy is anything with ``act(view) -> action`` (and, for tables,
a ``name``); bots also have ``seed(seed)``. :func:`as_policy` also takes a
plain callable ``f(view) -> action``.

Reasons. A policy may also have ``explain(view) -> Explanation``: the action it
chooses and the numbers behind it (a network's probabilities and value, a
search's sampled means or visit counts, the heuristic's expected scores). From
the same generator state, ``explain(view).action == act(view)``, so a front-end
calls :func:`explain` instead of ``act`` and the game is the same one;
:func:`explain` falls back to ``act`` (kind ``"none"``) for a policy without it.

Registry. :data:`LOADERS` maps a name to a loader ``(argument, rules, seed) ->
policy``. The baseline bots are built in; installed packages add names through the
entry-point group :data:`ENTRY_POINT_GROUP` (the trained agents come so, from this
project's ``pyproject.toml``). Loaders are named as ``"module:function"`` strings and
imported only when used: ``blackout_env`` imports neither the baselines nor torch at
module level, and names no training module. :func:`register_policy` adds a name, as a
callable or as a ``"module:function"`` string.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from .._checks import check_choice
from ..game.rules import Rules
from ..game.view import PlayerView

__all__ = [
    "EXPLANATION_KINDS",
    "ENTRY_POINT_GROUP",
    "FILE_OPTIONS",
    "LOADERS",
    "TRAIN_EXTRA_HINT",
    "ActionReason",
    "BotLoader",
    "CallablePolicy",
    "Explanation",
    "LazyLoader",
    "Policy",
    "absolute_paths",
    "action_reasons",
    "as_policy",
    "explain",
    "load_policy",
    "names_file",
    "parse_options",
    "parse_spec",
    "pop_file",
    "pop_seed",
    "policy_names",
    "register_policy",
    "spec_files",
    "split_specs",
]

TRAIN_EXTRA_HINT = "install the train extra: pip install torch==2.13.0 -e '.[train]'"
"""What to do when a policy or command needs torch and it is not installed."""


class Policy(Protocol):
    """What evaluation, play, the envs and the trainer's league need from a policy: ``act(view)``.

    Optional, and used where present (:class:`blackout_env.agents.seating.Seat` seats a policy at a
    table): ``act_batch(obs, mask)`` with an ``observation`` attribute (many games from their
    observation rows), ``batched(rules)`` (an object deciding from a batched engine's arrays),
    ``seed(int)``, and ``explain(view)`` (:func:`explain`).
    """

    name: str

    def act(self, view: PlayerView) -> int: ...


Loader = Callable[[str | None, Rules | None, int | None], Policy]

EXPLANATION_KINDS = ("policy", "search", "mcts", "heuristic", "random", "none")
"""What an :class:`Explanation`'s numbers are: a network's, sampled deals', tree-search visits', the heuristic's
expected scores, a uniform draw's, or none (a policy that gives no reasons)."""


@dataclass(frozen=True)
class ActionReason:
    """The numbers behind one legal action of a decision (None: the policy has no such number).

    ``probability``: the chance the policy gives the action (a network's policy, a uniform draw, a
    search's prior); ``value``: what choosing it is worth to the acting seat, in the policy's own units
    (the explanation's ``note`` says which); ``visits``: a tree search's visits to it.
    """

    action: int
    probability: float | None = None
    value: float | None = None
    visits: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able numbers."""
        return {
            "action": int(self.action),
            "probability": None if self.probability is None else float(self.probability),
            "value": None if self.value is None else float(self.value),
            "visits": None if self.visits is None else int(self.visits),
        }


@dataclass(frozen=True)
class Explanation:
    """Why a policy chooses ``action`` at a decision: its numbers for every legal action.

    ``kind`` is one of :data:`EXPLANATION_KINDS`; ``actions`` holds one :class:`ActionReason` per legal
    action, in the view's order; ``value`` is the policy's estimate of the position for the acting seat
    (None where it has none); ``note`` says in one sentence what the numbers are. Notes name no card,
    so they reveal nothing of the hand that the numbers do not.
    """

    action: int
    kind: str
    actions: tuple[ActionReason, ...]
    value: float | None
    note: str

    def __post_init__(self) -> None:
        check_choice("Explanation kind", self.kind, EXPLANATION_KINDS)

    def reason(self, action: int) -> ActionReason | None:
        """The reason given for ``action`` (None when it was not a legal action)."""
        return next((reason for reason in self.actions if reason.action == action), None)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able dicts and lists (e.g. for a web front-end's message)."""
        return {
            "action": int(self.action),
            "kind": self.kind,
            "actions": [reason.to_dict() for reason in self.actions],
            "value": None if self.value is None else float(self.value),
            "note": self.note,
        }


def action_reasons(
    actions: Iterable[int],
    probabilities: Mapping[int, float] | None = None,
    values: Mapping[int, float] | None = None,
    visits: Mapping[int, int] | None = None,
) -> tuple[ActionReason, ...]:
    """One :class:`ActionReason` per action, its numbers looked up in each mapping given (absent: None)."""

    def number(table: Mapping[int, Any] | None, action: int, kind: type) -> Any:
        found = None if table is None else table.get(action)
        return None if found is None else kind(found)

    return tuple(
        ActionReason(int(a), number(probabilities, a, float), number(values, a, float), number(visits, a, int))
        for a in actions
    )


def explain(policy: Any, view: PlayerView) -> Explanation:
    """Why ``policy`` (a policy, a spec or a callable, as :func:`as_policy` takes) acts as it does in ``view``.

    Its ``explain(view)`` when it has one (through :class:`SeededPolicy` too, which forwards it);
    otherwise the policy acts (``act(view)``) and the explanation, of kind ``"none"``, lists the legal
    actions without numbers. Call it instead of ``act``, not as well: for a policy with a generator,
    each call draws from it as ``act`` does.
    """
    policy = as_policy(policy)
    explainer = getattr(policy, "explain", None)
    if callable(explainer):
        return explainer(view)
    action = int(policy.act(view))
    name = getattr(policy, "name", type(policy).__name__)
    return Explanation(action, "none", action_reasons(view.legal_actions), None,
                       f"the {name} policy gives no reasons, only its action")


def parse_spec(spec: str) -> tuple[str, str | None]:
    """``"search:samples=64"`` -> ``("search", "samples=64")``; ``"heuristic"`` -> ``("heuristic", None)``."""
    name, _, argument = spec.partition(":")
    return name.strip(), argument or None


def parse_options(argument: str | None, spec: str) -> dict[str, Any]:
    """``"samples=64,time_limit_ms=200"`` -> ``{"samples": 64, "time_limit_ms": 200}``."""
    options: dict[str, Any] = {}
    if not argument:
        return options
    for item in argument.split(","):
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ValueError(f"policy {spec!r}: options are key=value pairs separated by commas, got {item!r}")
        if key in options:
            raise ValueError(f"policy {spec!r}: option {key!r} is given twice")
        value: Any = text.strip()
        for convert in (int, float):
            try:
                value = convert(value)
                break
            except ValueError:
                continue
        options[key] = value
    return options


def _import(target: str) -> Any:
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


class LazyLoader:
    """A loader named ``"module:function"``, imported when first used.

    ``hint`` says what to install when that import finds a module missing
    (:func:`load_policy` turns it into a ValueError naming the spec and the module).
    """

    def __init__(self, target: str, hint: str | None = None, path_argument: bool | None = None) -> None:
        if ":" not in target:
            raise ValueError(f"a loader string is 'module:function', got {target!r}")
        self.target, self.hint, self._path_argument = target, hint, path_argument

    @property
    def path_argument(self) -> bool:
        """Whether the argument is a file path: as given, else the target function's own ``path_argument``
        (which imports its module; False when that module is not installed)."""
        if self._path_argument is None:
            try:
                self._path_argument = bool(getattr(_import(self.target), "path_argument", False))
            except ImportError:
                return False
        return self._path_argument

    def __call__(self, argument: str | None, rules: Rules | None, seed: int | None) -> Policy:
        return _import(self.target)(argument, rules, seed)

    def __repr__(self) -> str:
        return f"LazyLoader({self.target!r})"


class SeededPolicy:
    """A policy whose spec fixes its seed: every reseed mixes that seed in (see the module docstring)."""

    def __init__(self, policy: Any, fixed_seed: int) -> None:
        self.policy, self.fixed_seed = policy, fixed_seed
        self.name = getattr(policy, "name", type(policy).__name__)
        self.seed(None)

    def seed(self, seed: int | None) -> None:
        """Reseed from the spec's seed and ``seed`` (None: the spec's seed alone)."""
        entropy = [self.fixed_seed] if seed is None else [self.fixed_seed, int(seed)]
        self.policy.seed(int(np.random.SeedSequence(entropy).generate_state(1)[0]))

    def act(self, view: PlayerView) -> int:
        return self.policy.act(view)

    def __getattr__(self, attribute: str) -> Any:  # e.g. suggest_bid, act_batch, explain
        policy = self.__dict__.get("policy")
        if policy is None:  # copy and pickle look up methods before __dict__ is filled
            raise AttributeError(attribute)
        return getattr(policy, attribute)


def pop_seed(options: dict[str, Any], spec: str) -> int | None:
    """A spec's own ``seed`` option, taken out of ``options`` (None: none given); ValueError naming the spec
    unless it is a whole number >= 0. The policy is then wrapped in :class:`SeededPolicy`."""
    fixed = options.pop("seed", None)
    if fixed is not None and (isinstance(fixed, bool) or not isinstance(fixed, int) or fixed < 0):
        raise ValueError(f"policy {spec!r}: seed must be a whole number >= 0, got {fixed!r}")
    return fixed


def pop_file(options: dict[str, Any], option: str, spec: str) -> str | None:
    """A spec's file option (``checkpoint=PATH``) taken out of ``options``; ValueError for an empty one."""
    value = options.pop(option, None)
    if value is not None and not str(value).strip():
        raise ValueError(f"policy {spec!r}: {option} is empty; give a file ({option}=PATH) or leave the option out")
    return None if value is None else str(value)


class BotLoader:
    """The baseline bot ``name`` (``blackout_baselines.make_bot``, imported when used); the argument holds options."""

    factory = "blackout_baselines:make_bot"

    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self, argument: str | None, rules: Rules | None, seed: int | None) -> Policy:
        spec = self.name if argument is None else f"{self.name}:{argument}"
        options = parse_options(argument, spec)
        fixed = pop_seed(options, spec)
        try:
            bot = _import(self.factory)(self.name, seed=seed if fixed is None else fixed, **options)
        except ValueError as error:  # an option the bot does not take
            raise ValueError(f"policy {spec!r}: {error}") from None
        return bot if fixed is None else SeededPolicy(bot, fixed)

    def __repr__(self) -> str:
        return f"BotLoader({self.name!r})"


LOADERS: dict[str, Loader] = {
    "random": BotLoader("random"),
    "heuristic": BotLoader("heuristic"),
    "search": BotLoader("search"),
    "ismcts": BotLoader("ismcts"),
}
"""Spec name -> loader(argument, rules, seed). The one place where policy names are defined: the baseline
bots here, then every name an installed package registers (:data:`ENTRY_POINT_GROUP`)."""

ENTRY_POINT_GROUP = "blackout.policies"
"""Installed packages add policy names through this entry-point group: ``NAME = "module:function [extra]"``.

This package's own agents (``ppo``, ``ppo-standard``, ``ppo+search``, ``ppo+search-deep``, ``ppo+rollout``, ``rllib``,
``openspiel_ismcts``) come so, from its ``pyproject.toml``: ``blackout_env`` names no training module. The
extra, when given, is what to install when the module is missing (``train``: torch; ``bench``: OpenSpiel). Nothing is imported until a spec is loaded."""


def _extra_hint(extras: list[str]) -> str | None:
    if not extras:
        return None
    if "train" in extras:
        return TRAIN_EXTRA_HINT
    return f"install the {extras[0]} extra: pip install 'blackout-rl[{extras[0]}]'"


def _register_entry_points() -> None:
    """Add the loaders that installed packages declare in :data:`ENTRY_POINT_GROUP` (read once, at import)."""
    from importlib.metadata import entry_points

    for entry in entry_points(group=ENTRY_POINT_GROUP):
        if entry.name not in LOADERS:  # a built-in name is never replaced by a package
            LOADERS[entry.name] = LazyLoader(entry.value.split("[", 1)[0].strip(), hint=_extra_hint(list(entry.extras)))


_register_entry_points()


def register_policy(name: str, loader: Loader | str) -> None:
    """Add (or replace) the loader for specs ``name`` and ``name:ARGUMENT``: a callable or ``"module:function"``."""
    if not isinstance(name, str) or not name or ":" in name:
        raise ValueError(f"policy name must be a non-empty name without ':', got {name!r}")
    if isinstance(loader, str):
        loader = LazyLoader(loader)
    elif not callable(loader):
        raise ValueError(f"policy {name!r}: a loader is a callable or a 'module:function' string, got {loader!r}")
    LOADERS[name] = loader


FILE_OPTIONS = frozenset({"checkpoint", "play_model", "bid_model"})
"""Options whose value is always a file (``ppo+search:checkpoint=PATH``); ``belief`` names one sometimes (:func:`names_file`)."""

_BELIEF_KINDS = ("uniform", "bids", "play", "bids+play")


def names_file(option: str, value: Any) -> bool:
    """Whether a spec's ``option=value`` names a file: a :data:`FILE_OPTIONS` option, or a ``belief``
    that is none of IS-MCTS's kinds and not ``ppo+rollout``'s number."""
    option = option.strip()
    if option in FILE_OPTIONS:
        return True
    if option != "belief" or value is None or isinstance(value, (int, float)):
        return False
    try:
        float(value)
    except ValueError:
        return str(value).strip() not in _BELIEF_KINDS
    return False


def _file_parts(spec: str) -> tuple[str, str | None, list[tuple[str, str]]]:
    """``(name, the argument when it is the file, [(option, value) of the options naming files])``."""
    name, argument = parse_spec(spec)
    if argument is None:
        return name, None, []
    if getattr(LOADERS.get(name), "path_argument", False):
        return name, argument, []
    options = []
    for item in argument.split(","):
        key, sep, value = item.partition("=")
        if sep and names_file(key, value):
            options.append((key, value))
    return name, None, options


def spec_files(spec: str) -> list[str]:
    """The files a spec names: ``ppo:PATH``'s path, ``checkpoint=``, ``bid_model=``, a ``belief`` file."""
    _, path, options = _file_parts(spec)
    files = [path] if path is not None else [value for _, value in options]
    return [file.strip() for file in files if file.strip()]


def absolute_paths(spec: str) -> str:
    """The spec with every file it names made absolute (``ppo:runs/x.pt`` -> ``ppo:/home/.../runs/x.pt``,
    ``ppo+search:checkpoint=x.pt,simulations=800`` -> ``ppo+search:checkpoint=/home/.../x.pt,simulations=800``).

    For specs that are stored and loaded again from another folder (a saved ``blackout play`` game, a
    dataset's env spec). Loaders whose argument is a path say so with ``path_argument = True``; the
    options that name files are :func:`names_file`'s; other specs are returned unchanged.
    """
    name, path, options = _file_parts(spec)
    if path is not None:
        return f"{name}:{os.path.abspath(os.path.expanduser(path.strip()))}"
    if not options:
        return spec
    items = []
    for item in parse_spec(spec)[1].split(","):  # type: ignore[union-attr]
        key, sep, value = item.partition("=")
        if sep and value.strip() and names_file(key, value):
            item = f"{key}={os.path.abspath(os.path.expanduser(value.strip()))}"
        items.append(item)
    return f"{name}:{','.join(items)}"


def split_specs(text: str) -> list[str]:
    """Policy specs separated by commas (``heuristic,ppo``), each stripped; a ``key=value`` after a comma is
    another option of the spec before it (``search:samples=64,time_limit_ms=200,heuristic`` is two specs)."""
    specs: list[str] = []
    for part in (part.strip() for part in text.split(",")):
        if specs and "=" in part and ":" not in part.split("=", 1)[0] and ":" in specs[-1]:
            specs[-1] += "," + part
        else:
            specs.append(part)
    return specs


def policy_names() -> list[str]:
    """The known spec names."""
    return list(LOADERS)


class CallablePolicy:
    """A plain function ``f(view) -> action`` as a policy (it cannot be reseeded)."""

    def __init__(self, function: Callable[[PlayerView], int], name: str | None = None) -> None:
        self.function = function
        self.name = name or getattr(function, "__name__", None) or type(function).__name__

    def act(self, view: PlayerView) -> int:
        return self.function(view)

    def __repr__(self) -> str:
        return f"CallablePolicy({self.name!r})"


def load_policy(spec: Any, rules: Rules | str | Mapping[str, Any] | None = None, seed: int | None = None) -> Policy:
    """The policy named by ``spec`` ("random", "heuristic", "search:samples=64", "ppo", "ppo:PATH").

    A policy object (anything with ``act``) is returned unchanged and a plain
    callable is wrapped (:class:`CallablePolicy`). Raises ValueError naming the
    spec: an unknown name (listing the known ones), a bad option, a missing
    checkpoint, a module that is not installed.
    """
    if not isinstance(spec, str):
        return as_policy(spec)
    name, argument = parse_spec(spec)
    if argument is None and ":" in spec:
        raise ValueError(f"policy {spec!r}: nothing after ':' (name a checkpoint or options there, or drop the colon)")
    loader = LOADERS.get(name)
    if loader is None:
        raise ValueError(f"unknown policy {spec!r}; known policies: {', '.join(LOADERS)} (and NAME:OPTIONS)")
    resolved = Rules.resolve(rules) if rules is not None else None
    try:
        return loader(argument, resolved, seed)
    except ModuleNotFoundError as error:
        hint = getattr(loader, "hint", None)
        advice = f": {hint}" if hint else ""
        raise ValueError(f"policy {spec!r} needs the module {error.name!r}, which is not installed{advice}") from None


def as_policy(policy: Any, rules: Rules | str | Mapping[str, Any] | None = None, seed: int | None = None) -> Policy:
    """A spec (loaded), an object with ``act(view)`` (unchanged) or a callable ``f(view)`` (wrapped) as a policy."""
    if isinstance(policy, str):
        return load_policy(policy, rules, seed)
    if callable(getattr(policy, "act", None)):
        return policy
    if callable(policy):
        return CallablePolicy(policy)
    raise ValueError(
        f"a policy is a spec such as 'heuristic', an object with act(view) or a callable f(view) -> action, "
        f"got {policy!r}"
    )
