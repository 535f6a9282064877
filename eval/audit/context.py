"""The inputs of the audit, loaded lazily and once: benchmark, flags, index, runs, scores."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import Any

from eval.audit.values import NotComputable
from eval.scoring import ScoreOptions, score_run
from retriever import Retriever, load_benchmark, load_config, load_flags, load_index
from tempbench_core.errors import InputError, RunMismatchError
from tempbench_core.layout import default_index_cache
from tempbench_core.provenance import Provenance, absolute, make_provenance
from tempbench_core.runchecks import check_run_inputs
from tempbench_core.runfile import read_meta, read_run
from tempbench_core.schema import DEFAULT_SPLIT, select_split


class AuditContext:
    """Lazily loaded inputs of the audit.

    Parameters
    ----------
    data:
        :class:`tempbench_core.layout.DataPaths`.
    runs_dir:
        Directory with ``<config>.jsonl`` run files to use when present; the
        configurations without one are run in memory on ``split``.
    split:
        The split of the retrieval claims (``test``).
    cache_dir:
        Index cache directory.
    scores:
        Already computed score objects by configuration (reused, not recomputed).
    memo:
        Values several claims share, when the caller has made some already
        (``tempbench reproduce``'s cache of what depends on the question alone:
        its differing triples); the audit adds its own.
    provenance:
        Where the data came from (:func:`tempbench_core.provenance.make_provenance`,
        made by the command); found from ``data`` when not given. Its origin
        decides the ``by-construction`` verdicts.
    """

    def __init__(self, data: Any, runs_dir: str | Path | None = None, split: str = DEFAULT_SPLIT,
                 cache_dir: str | Path | None = None, scores: Mapping[str, Any] | None = None,
                 index: Any = None, force: bool = False, memo: dict[Any, Any] | None = None,
                 provenance: Provenance | None = None) -> None:
        self.data = data
        self.provenance = provenance if provenance is not None else make_provenance(data)
        self.runs_dir = Path(runs_dir) if runs_dir is not None else None
        self.split = split
        self.cache_dir = cache_dir
        self._scores: dict[str, Any] = dict(scores or {})
        self._runs: dict[str, dict[str, Any]] = {}
        self._offered: dict[str, tuple[Path, dict[str, Any]]] = {}
        self._offered_anchors: dict[str, tuple[Path, Mapping[Any, Any]]] = {}
        self._checked: set[str] = set()  # the run files whose inputs and role were checked
        self._index = index
        self.force = force
        self.warnings: list[str] = []
        self.run_sources: dict[str, str] = {}
        # values several claims share, computed once per audit (e.g. a question's differing triples)
        self.memo: dict[Any, Any] = {} if memo is None else memo

    @property
    def origin(self) -> str:
        """The data's origin (:data:`tempbench_core.provenance.ORIGINS`)."""
        return self.provenance.origin

    @cached_property
    def questions(self) -> list[dict[str, Any]]:
        self.data.require("benchmark")
        return load_benchmark(self.data.benchmark, self.data.benchmark_ids)

    @cached_property
    def flags(self) -> dict[str, dict[str, bool]] | None:
        if self.data.flags is None or not Path(self.data.flags).exists():
            return None
        return load_flags(self.data.flags)

    def require_flags(self) -> dict[str, dict[str, bool]]:
        """The functional flags; not computable without them."""
        if self.flags is None:
            raise NotComputable("functional_negatives.jsonl not found (give --flags)")
        return self.flags

    @property
    def index(self) -> Any:
        if self._index is None:
            self.data.require("kg")
            cache = Path(self.cache_dir) if self.cache_dir is not None else default_index_cache()
            self._index = load_index(self.data.kg, self.data.labels, benchmark_dir=self.data.benchmark, cache_dir=cache)
        return self._index

    def split_questions(self, split: str) -> list[dict[str, Any]]:
        """The questions of ``split`` in file order (``all``: every question)."""
        return select_split(self.questions, split)

    def run(self, config: str) -> dict[str, Any]:
        """``{question id: record}`` of a configuration: from ``runs_dir`` or run now."""
        if config not in self._runs:
            path = self._run_file(config)
            offered = self._offered.get(config)
            if path is not None:
                self._runs[config] = offered[1] if offered is not None and offered[0] == path else read_run(path)
                self.run_sources[config] = absolute(path)  # whatever folder the command ran in
            else:
                retriever = Retriever(self.index, load_config(config))
                records = retriever.retrieve_many(self.split_questions(self.split))
                self._runs[config] = {record["id"]: record for record, _ in records}
                self.run_sources[config] = f"in memory ({self.split} split)"
        return self._runs[config]

    def anchors(self, config: str) -> Mapping[Any, Any]:
        """``{question id: the anchor.id of its record}`` of a configuration's run (``None``: no anchor).

        Taken from :meth:`offer_anchors` when the caller offered the anchors of
        the very file :meth:`run` would read (after the same checks), else read
        from :meth:`run`'s records.
        """
        offered = self._offered_anchors.get(config)
        if config not in self._runs and offered is not None:
            path = self._run_file(config)
            if path is not None and offered[0] == path:
                self.run_sources[config] = absolute(path)
                return offered[1]
        run = self.run(config)
        out = {}
        for qid, rec in run.items():
            anchor = rec.get("anchor")
            if anchor and not isinstance(anchor, Mapping):
                shown = repr(anchor)
                # read_run keeps each question's line; a run made in memory has none
                raise InputError(self.run_sources.get(config, f"the {config} run"), getattr(run, "lines", {}).get(qid),
                                 f"the record of question {qid!r} has anchor {shown[:80]}{'...' if len(shown) > 80 else ''}",
                                 'an object such as {"id": "Q42", "source": "linker"}, or null (SPEC §6.1)')
            out[qid] = anchor.get("id") if anchor else None
        return out

    def _run_file(self, config: str) -> Path | None:
        """``runs_dir/<config>.jsonl`` when it exists, checked once (its inputs, its role), else ``None``."""
        path = self.runs_dir / f"{config}.jsonl" if self.runs_dir is not None else None
        if path is None or not path.exists():
            return None
        if config not in self._checked:
            self.warnings += check_run_inputs(path, self.data, ("kg", "labels", "benchmark", "benchmark_ids"),
                                              force=self.force)
            self.warnings += self._check_role(path, config)
            self._checked.add(config)
        return path

    def offer_run(self, config: str, path: str | Path, records: dict[str, Any]) -> None:
        """``records`` are what ``path`` holds (the caller just wrote it): :meth:`run` takes them instead of reading it.

        The checks of :meth:`run` still apply when the run is first used.
        """
        self._offered[config] = (Path(path), records)

    def offer_anchors(self, config: str, path: str | Path, anchors: Mapping[Any, Any]) -> None:
        """``anchors`` (question id -> anchor id) are those of the records ``path`` holds (the caller just wrote it).

        :meth:`anchors` takes them instead of reading the whole run; the checks
        of :meth:`run` still apply.
        """
        self._offered_anchors[config] = (Path(path), anchors)

    def _check_role(self, path: Path, config: str) -> list[str]:
        """A run file standing for a shipped configuration must have been made with it (its ``.meta.json``)."""
        recorded = (read_meta(path) or {}).get("config")
        if not isinstance(recorded, dict):
            return [f"{path} has no .meta.json: it is taken to be the {config} configuration unchecked"]
        expected = load_config(config).to_dict()
        differs = [k for k in expected if k not in ("name", "description") and recorded.get(k) != expected[k]]
        if not differs:
            return []
        problem = (f"{path} fills the role of {config!r} but was made with other settings: "
                   + ", ".join(f"{k}={recorded.get(k)!r} (the shipped {config} has {expected[k]!r})" for k in differs))
        if not self.force:
            raise RunMismatchError(problem + " (run it with --config " + config + ", or give --force)")
        return [problem]

    def scores(self, config: str) -> dict[str, Any]:
        """SPEC §6.2 score object of a configuration on the audit split."""
        if config not in self._scores:
            # Point values only: the audit prints no intervals, so one bootstrap replicate.
            split = None if self.split == "all" else self.split
            options = ScoreOptions(split=split, n_boot=1)
            self._scores[config] = score_run(self.run(config), self.questions, self.flags, options=options)
        return self._scores[config]
