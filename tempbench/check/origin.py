"""Where a data root came from, so that a hint for a missing or changed file fits it.

Four origins, recognised from what the root records about itself:

- ``generated``: ``tempbench sample`` wrote it (it holds ``MANIFEST.json``);
  a missing file is regenerated with the sample command of its scale and seed;
- ``built``: ``tempbench build-benchmark`` wrote it (its lock has the group
  :data:`BUILD_GROUP`); a file linked from the user's KG or labels is restored
  from that file, a benchmark file is rebuilt with the recorded command;
- ``fetched``: ``tempbench fetch tgb`` or ``fetch release`` laid it out (lock
  groups ``tgb``, ``release``); the hint is the fetch command;
- ``unknown``: anything else (the hints name every way to get the file).

A root can hold several groups (``fetch tgb`` then ``build-benchmark``): a file
is then hinted by the group that wrote it, a file no group wrote by the built
benchmark first (it says how the benchmark was made), then the fetch.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tempbench_core.layout import GZ, MANIFEST
from tempbench_core.lock import Lock, LockError, read_lock

#: The lock group ``tempbench build-benchmark`` writes; its ``sources`` entry holds
#: ``kg``, ``labels``, ``seed``, ``target_n``, ``questions``, ``tool`` and ``command``.
BUILD_GROUP = "build-benchmark"
#: Lock groups of ``tempbench fetch``.
FETCH_GROUPS = ("tgb", "release")
#: The hints of a root whose origin says nothing (also those of a fetched root).
GET_KG = "get it with 'tempbench fetch tgb --out DIR'"
GET_BENCHMARK = "lay out the release with 'tempbench fetch release --from SRC --out DIR'"


@dataclass(frozen=True)
class Origin:
    """What a data root says about where it came from.

    Attributes
    ----------
    kind:
        ``generated``, ``built``, ``fetched`` or ``unknown``.
    manifest:
        The sample's manifest (``generated``), else empty.
    lock:
        The root's lock (empty when it has none or it cannot be read).
    """

    kind: str
    manifest: dict[str, Any] = field(default_factory=dict)
    lock: Lock | None = None

    @property
    def build(self) -> dict[str, Any]:
        """The ``build-benchmark`` entry of the lock (empty when the root was not built)."""
        return self.lock.sources.get(BUILD_GROUP, {}) if self.lock is not None else {}

    def hint(self, rel: str, role: str) -> str:
        """How to get back the missing file ``rel`` (data-root-relative) of ``role`` (``kg``, ``benchmark``, ...)."""
        entry = None
        if self.lock is not None:
            # the plain name is looked for first: the lock may hold the .gz form of a missing file
            plain = rel[: -len(GZ)] if rel.endswith(GZ) else rel
            entry = self.lock.files.get(rel) or self.lock.files.get(plain) or self.lock.files.get(plain + GZ)
        group = entry.group if entry is not None else None
        if self.kind == "generated" and group is None:
            scale, seed = self.manifest.get("scale"), self.manifest.get("seed")
            return f"regenerate the root with 'tempbench sample --scale {scale} --seed {seed} --out DIR'"
        if group == BUILD_GROUP or (group is None and self.build):
            return self._built_hint(rel, role, entry.source if entry is not None else None)
        return GET_KG if role == "kg" else GET_BENCHMARK

    def _built_hint(self, rel: str, role: str, source: str | None) -> str:
        command = self.build.get("command")
        if role in ("kg", "labels"):
            recorded = self.build.get(role) or {}
            where = source or recorded.get("file")
            if where:
                return f"restore {rel} from {where} (the {'KG' if role == 'kg' else role} the benchmark was built from)"
        if isinstance(command, str) and command:
            return f"rebuild it with '{command}'"
        return "rebuild it with 'tempbench build-benchmark --kg CSV --out DIR'"

    def describe(self) -> str | None:
        """One line on how a built root was made (``None`` for other origins)."""
        build = self.build
        if not build:
            return None
        kg = build.get("kg") or {}
        return (f"benchmark built by 'tempbench build-benchmark' from the KG {kg.get('file')} (sha256 "
                f"{str(kg.get('sha256'))[:12]}...), seed {build.get('seed')}, {build.get('questions')} questions")


def find_origin(root: Path | None) -> Origin:
    """The origin of ``root`` (see the module docstring); an unreadable lock counts as none here."""
    if root is None:
        return Origin("unknown")
    try:
        lock = read_lock(root)
    except LockError:
        lock = None  # the lock step reports it
    manifest: dict[str, Any] = {}
    if (root / MANIFEST).is_file():
        try:
            doc = json.loads((root / MANIFEST).read_text(encoding="utf-8"))
            manifest = doc if isinstance(doc, dict) else {}
        except (OSError, ValueError):
            manifest = {}
        return Origin("generated", manifest, lock)
    if lock is not None and BUILD_GROUP in lock.sources:
        return Origin("built", manifest, lock)
    if lock is not None and any(g in lock.sources for g in FETCH_GROUPS):
        return Origin("fetched", manifest, lock)
    return Origin("unknown", manifest, lock)


def command_line(words: list[str]) -> str:
    """A command line as a shell reads it back (each word quoted where needed)."""
    return shlex.join(words)

