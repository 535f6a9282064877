"""The audit: the dataset card's claims recomputed from the user's files (SPEC §4).

The claims, their published values and tolerances live in
``configs/paper_numbers.toml``; each names a function of :data:`COMPUTE` and its
parameters. A function receives an :class:`AuditContext` (which loads the
benchmark, flags, index, runs and scores lazily, once) and returns a
:class:`Value` or raises :class:`NotComputable` with the reason.

Definitions the card leaves open (our readings, also in ``data/README.md``;
each alternative is a parameter and an ``alt.`` row of the claims file):

- *answer year*: an answer (or any alias of a list answer) that is an integer
  literal, optionally followed by ``.0``; the leak holds when it equals
  ``float(t_query)`` (``check="numeric"``). Alternative ``check="prefix"``: the
  card's own snippet, ``str(t_query).startswith(str(answer))``.
- *text contains the query year*: the decimal year of a whole-number
  ``t_query`` occurs in the question not adjacent to another digit
  (``match="digits"``); alternatives ``"substring"`` (plain ``str(year) in
  text``) and ``"token"`` (a ``\\w+`` token of the lowercased text).
- *functional population*: the questions of the split whose flag is true; every
  one of them is in the denominator of the stale / distractor rows (the card's
  1,429 and 1,237 are flagged counts).
- *replaced hop / replacement*: as in SPEC §3.3 (exactly one triple of
  ``S_star`` missing from the variant and one of the variant missing from
  ``S_star``, compared on ``s, r, o, t_start, t_end`` in the space both carry).
  A flagged question where not exactly one triple differs is in the
  denominator, in no BM25 outcome, and said so in the row's note; for validity
  its differing variant triples are used (valid when any is).
- *BM25 of a triple*: the index's BM25 (``N``, ``df``, ``avgdl`` of the KG) of
  the document ``label(s) label(r) label(o)`` built from the triple's rendered
  labels (ids rendered as the index renders them, SPEC §1.2), with the question
  text as query (SPEC §2.2). For a triple that is a KG row this is that row's
  document; a triple absent from the KG is still scored, never skipped.
- *gold-anchor recall*: over the split's questions whose gold first-hop subject
  resolves to an entity id as the oracle resolves it (SPEC §2.3), the share
  whose linker anchor (from the ``nonoracle`` run) is that id; a question
  missing from the run counts as a miss. Alternative ``over="all"``: every
  question of the split in the denominator.
- *released distractors*: every question of the release (all splits) whose
  ``S_dist`` differs from ``S_star``; alternatives: the functional ones, or the
  test split only.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from eval.verdict import delta, tolerances_from_toml, verdict
from tempbench.core.errors import ConfigError, MissingDataError

CONFIGS = ("oracle", "nonoracle", "stale_blind", "hop3_k25")


class NotComputable(Exception):
    """A claim cannot be recomputed from the files given (the reason is the message)."""


@dataclass(frozen=True)
class Value:
    """A reproduced value, with an optional denominator and remark."""

    value: Any
    of: int | None = None
    note: str | None = None


@dataclass(frozen=True)
class Claim:
    """One row of ``configs/paper_numbers.toml``."""

    id: str
    section: str
    group: str
    what: str
    paper: Any
    kind: str
    compute: str
    params: dict[str, Any]
    command: str
    paper_of: int | None = None
    note: str | None = None
    tolerance: dict[str, float] = field(default_factory=dict)


def _toml_load(path: Path) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        raise MissingDataError(f"paper numbers file not found: {path}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None


def paper_numbers_path() -> Path:
    """The shipped ``paper_numbers.toml``."""
    from tempbench.core.layout import shipped_configs_dir

    return shipped_configs_dir() / "paper_numbers.toml"


def load_claims(path: str | Path | None = None) -> tuple[list[Claim], dict[str, dict[str, float]]]:
    """Read the claims and the tolerance classes; validate every row."""
    p = Path(path) if path is not None else paper_numbers_path()
    data = _toml_load(p)
    try:
        tolerances = tolerances_from_toml(data.get("tolerance"))
    except ValueError as exc:
        raise ConfigError(f"{p}: {exc}") from None
    claims = []
    seen: set[str] = set()
    required = ("id", "section", "group", "what", "paper", "kind", "compute", "command")
    for i, row in enumerate(data.get("claim", []), start=1):
        missing = [k for k in required if k not in row]
        if missing:
            raise ConfigError(f"{p}: claim #{i} lacks {', '.join(missing)}")
        if row["id"] in seen:
            raise ConfigError(f"{p}: claim id {row['id']!r} appears twice")
        seen.add(row["id"])
        if row["kind"] not in tolerances:
            raise ConfigError(f"{p}: claim {row['id']!r} has kind {row['kind']!r} (expected one of {', '.join(tolerances)})")
        if row["compute"] not in COMPUTE:
            raise ConfigError(f"{p}: claim {row['id']!r} names compute {row['compute']!r} (known: {', '.join(sorted(COMPUTE))})")
        claims.append(Claim(
            id=row["id"], section=str(row["section"]), group=row["group"], what=row["what"], paper=row["paper"],
            kind=row["kind"], compute=row["compute"], params=dict(row.get("params", {})), command=row["command"],
            paper_of=row.get("paper_of"), note=row.get("note"), tolerance=dict(row.get("tolerance", {})),
        ))
    return claims, tolerances


# --------------------------------------------------------------------------- context


class AuditContext:
    """Lazily loaded inputs of the audit.

    Parameters
    ----------
    data:
        :class:`tempbench.core.layout.DataPaths`.
    runs_dir:
        Directory with ``<config>.jsonl`` run files to use when present; the
        configurations without one are run in memory on ``split``.
    split:
        The split of the retrieval claims (``test``).
    cache_dir:
        Index cache directory.
    scores:
        Already computed score objects by configuration (reused, not recomputed).
    """

    def __init__(self, data: Any, runs_dir: str | Path | None = None, split: str = "test",
                 cache_dir: str | Path | None = None, scores: Mapping[str, Any] | None = None,
                 index: Any = None) -> None:
        self.data = data
        self.runs_dir = Path(runs_dir) if runs_dir is not None else None
        self.split = split
        self.cache_dir = cache_dir
        self._scores: dict[str, Any] = dict(scores or {})
        self._runs: dict[str, dict[str, Any]] = {}
        self._index = index
        self.run_sources: dict[str, str] = {}

    @cached_property
    def questions(self) -> list[dict[str, Any]]:
        from retriever.benchmark import load_benchmark

        self.data.require("benchmark")
        return load_benchmark(self.data.benchmark, self.data.benchmark_ids)

    @cached_property
    def flags(self) -> dict[str, dict[str, bool]] | None:
        from retriever.benchmark import load_flags

        if self.data.flags is None or not Path(self.data.flags).exists():
            return None
        return load_flags(self.data.flags)

    def require_flags(self) -> dict[str, dict[str, bool]]:
        if self.flags is None:
            raise NotComputable("functional_negatives.jsonl not found (give --flags)")
        return self.flags

    @property
    def index(self) -> Any:
        if self._index is None:
            from retriever.index import load_index
            from tempbench.core.layout import default_index_cache

            self.data.require("kg")
            cache = Path(self.cache_dir) if self.cache_dir is not None else default_index_cache()
            self._index = load_index(self.data.kg, self.data.labels, benchmark_dir=self.data.benchmark, cache_dir=cache)
        return self._index

    def split_questions(self, split: str) -> list[dict[str, Any]]:
        return list(self.questions) if split == "all" else [q for q in self.questions if q.get("split") == split]

    def run(self, config: str) -> dict[str, Any]:
        """``{question id: record}`` of a configuration: from ``runs_dir`` or run now."""
        if config not in self._runs:
            path = self.runs_dir / f"{config}.jsonl" if self.runs_dir is not None else None
            if path is not None and path.exists():
                from eval.runs import read_run

                self._runs[config] = read_run(path)
                self.run_sources[config] = str(path)
            else:
                from retriever.config import load_config
                from retriever.pipeline import Retriever

                retriever = Retriever(self.index, load_config(config))
                self._runs[config] = {q["id"]: retriever.retrieve(q) for q in self.split_questions(self.split)}
                self.run_sources[config] = f"in memory ({self.split} split)"
        return self._runs[config]

    def scores(self, config: str) -> dict[str, Any]:
        """SPEC §6.2 score object of a configuration on the audit split."""
        if config not in self._scores:
            from eval.scoring import score_run

            # Point values only: the audit prints no intervals, so one bootstrap replicate.
            split = None if self.split == "all" else self.split
            self._scores[config] = score_run(self.run(config), self.questions, self.flags, split=split, n_boot=1)
        return self._scores[config]


# --------------------------------------------------------------------------- helpers


_INT_LITERAL = re.compile(r"^\s*(-?\d+)(?:\.0*)?\s*$")


def answer_years(answer: Any) -> list[int]:
    """Years an answer states: integer literals (``"1994"``, ``1994``, ``"1994.0"``), any alias of a list."""
    values = answer if isinstance(answer, (list, tuple)) else [answer]
    years = []
    for value in values:
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, int):
            years.append(value)
        elif isinstance(value, float) and value.is_integer():
            years.append(int(value))
        elif isinstance(value, str):
            m = _INT_LITERAL.match(value)
            if m:
                years.append(int(m.group(1)))
    return years


def tquery_is_answer(question: Mapping[str, Any], check: str = "numeric") -> bool:
    """The leak test: ``t_query`` equals the answer year.

    ``check="numeric"`` (default): an answer year (:func:`answer_years`) equals
    ``float(t_query)``. ``check="prefix"``: the card's snippet,
    ``str(t_query).startswith(str(answer))``.
    """
    if check == "prefix":
        return str(question["t_query"]).startswith(str(question.get("answer")))
    if check != "numeric":
        raise ConfigError(f"unknown leak check {check!r} (expected numeric or prefix)")
    tq = float(question["t_query"])
    return any(float(y) == tq for y in answer_years(question.get("answer")))


def whole_year(tq: Any) -> int | None:
    f = float(tq)
    return int(f) if f.is_integer() else None


def text_has_year(text: str, year: int, match: str = "digits") -> bool:
    """Whether ``text`` contains the decimal ``year``.

    ``match="digits"`` (default): not adjacent to another digit;
    ``"substring"``: ``str(year) in text``; ``"token"``: one of the ``\\w+``
    tokens of the lowercased text (SPEC §2.1 tokenizer) equals ``str(year)``.
    """
    if match == "digits":
        return re.search(rf"(?<!\d){year}(?!\d)", text) is not None
    if match == "substring":
        return str(year) in text
    if match == "token":
        from retriever.tokenize import tokenize

        return str(year) in tokenize(text)
    raise ConfigError(f"unknown year match {match!r} (expected digits, substring or token)")


def differing(question: Mapping[str, Any], variant: str) -> tuple[list[dict], list[dict]]:
    """``(S_star triples missing from the variant, variant triples missing from S_star)``.

    Compared on ``(s, r, o, t_start, t_end)`` as SPEC §3.3 (ids when every
    triple of both lists carries them, else labels); both empty when the
    variant is absent or the two lists share no key space. Each triple is a
    dict with ``t_start``, ``t_end`` and the keys of every space it carries.
    """
    from eval.trp_ccr import _gold_triples

    if question.get(variant) is None:
        return [], []
    star = _gold_triples(question, "S_star")
    other = _gold_triples(question, variant)
    spaces = set.intersection(*(set(t.keys) for t in star + other)) if star + other else set()
    if not spaces:
        return [], []
    space = "id" if "id" in spaces else "label"
    star_five = {t.five(space) for t in star}
    other_five = {t.five(space) for t in other}
    gone = [_as_dict(t) for t in star if t.five(space) not in other_five]
    new = [_as_dict(t) for t in other if t.five(space) not in star_five]
    return _dedup(gone), _dedup(new)


def _as_dict(gt: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"t_start": gt.t_start, "t_end": gt.t_end}
    for space, srot in gt.keys.items():
        names = ("s_id", "r_id", "o_id") if space == "id" else ("s", "r", "o")
        d.update(zip(names, srot, strict=True))
    return d


def _dedup(triples: list[dict]) -> list[dict]:
    # A triple listed twice is one triple (SPEC §3.3 compares sets).
    out: list[dict] = []
    for t in triples:
        if t not in out:
            out.append(t)
    return out


def replacement_pair(question: Mapping[str, Any], variant: str) -> tuple[dict, dict] | None:
    """``(replaced gold hop, replacement)`` for ``S_stale``/``S_dist`` (SPEC §3.3), or ``None``.

    ``None`` when not exactly one triple differs each way (see :func:`differing`).
    """
    gone, new = differing(question, variant)
    if len(gone) != 1 or len(new) != 1:
        return None
    return gone[0], new[0]


def valid_at(triple: Mapping[str, Any], tq: float) -> bool:
    """``t_start <= tq <= t_end`` as floats (SPEC §2.4)."""
    return float(triple["t_start"]) <= tq <= float(triple["t_end"])


def triple_document(index: Any, triple: Mapping[str, Any]) -> str:
    """``label(s) + " " + label(r) + " " + label(o)`` of a benchmark triple (SPEC §2.1).

    Ids are rendered as the index renders them (raw id fallback, SPEC §1.2);
    a label-only triple uses its labels as given.
    """
    if all(k in triple for k in ("s_id", "r_id", "o_id")):
        return " ".join(index.render(str(triple[k])) for k in ("s_id", "r_id", "o_id"))
    return " ".join(str(triple[k]) for k in ("s", "r", "o"))


def bm25_text_score(bm25: Any, query: str, document: str) -> float:
    """BM25 of ``query`` against a document given by its text, with the index's statistics.

    ``score = 0.0 + sum over t in dedup(tokens(query)) present in the corpus:
    idf(t) * (tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl)))`` in
    float64 and in that operation order (SPEC §2.2), ``tf`` and ``dl`` counted
    on ``tokenize(document)``; for the text of a KG row this equals
    ``bm25.score(query, [row])`` bit for bit.
    """
    from collections import Counter

    from retriever.tokenize import tokenize

    tokens = tokenize(document)
    tf = Counter(tokens)
    dl = len(tokens)
    k1, b = bm25.k1, bm25.b
    norm = k1 * (1 - b + b * dl / bm25.avgdl)
    total = 0.0
    for term in bm25.query_terms(query).tolist():
        f = tf.get(bm25.vocab[term], 0)
        total += float(bm25.idf[term]) * (f * (k1 + 1) / (f + norm))
    return total


# --------------------------------------------------------------------------- computations


def split_questions(ctx: AuditContext, split: str) -> Value:
    return Value(len(ctx.split_questions(split)))


def split_interval(ctx: AuditContext, split: str) -> Value:
    qs = ctx.split_questions(split)
    return Value(sum(q.get("operator_type") == "interval" for q in qs), of=len(qs))


def split_interval_share(ctx: AuditContext, split: str) -> Value:
    qs = ctx.split_questions(split)
    if not qs:
        raise NotComputable(f"no {split} questions")
    return Value(sum(q.get("operator_type") == "interval" for q in qs) / len(qs))


def _operator_set(ctx: AuditContext, operator: str) -> list[dict[str, Any]]:
    if operator == "other":
        return [q for q in ctx.questions if q.get("operator_type") != "interval"]
    return [q for q in ctx.questions if q.get("operator_type") == operator]


def leak_interval_count(ctx: AuditContext, check: str = "numeric") -> Value:
    """Interval questions (all splits) whose ``t_query`` is the answer year, of all interval questions."""
    qs = _operator_set(ctx, "interval")
    return Value(sum(tquery_is_answer(q, check) for q in qs), of=len(qs))


def leak_rate(ctx: AuditContext, operator: str, check: str = "numeric") -> Value:
    """Share of the operator's questions (all splits; ``other`` = not interval) with the leak."""
    qs = _operator_set(ctx, operator)
    if not qs:
        raise NotComputable(f"no {operator} questions")
    hits = sum(tquery_is_answer(q, check) for q in qs)
    return Value(hits / len(qs), note=f"{hits} of {len(qs)}")


def _share(n: int, of: int, what: str) -> Value:
    if of == 0:
        raise NotComputable(f"no {what}")
    return Value(n / of, note=f"{n} of {of}")


def text_contains_year(ctx: AuditContext, share: bool = False, match: str = "digits") -> Value:
    """Interval questions (all splits) whose text contains the year of ``t_query`` (:func:`text_has_year`)."""
    qs = _operator_set(ctx, "interval")
    n = 0
    for q in qs:
        year = whole_year(q["t_query"])
        if year is not None and text_has_year(str(q.get("question", "")), year, match):
            n += 1
    return _share(n, len(qs), "interval questions") if share else Value(n, of=len(qs))


def _flagged(ctx: AuditContext, split: str, flag: str) -> list[dict[str, Any]]:
    """The split's questions whose functional flag ``flag`` is true (file order)."""
    flags = ctx.require_flags()
    return [q for q in ctx.split_questions(split) if flags.get(q["id"], {}).get(flag, False)]


def _evaluable(questions: list[dict[str, Any]], variant: str) -> list[tuple[dict, dict, dict]]:
    """``(question, replaced hop, replacement)`` of the questions with exactly one differing triple."""
    out = []
    for q in questions:
        pair = replacement_pair(q, variant)
        if pair is not None:
            out.append((q, pair[0], pair[1]))
    return out


def _not_evaluable_note(n_pairs: int, flagged: int) -> str | None:
    missing = flagged - n_pairs
    if not missing:
        return None
    return f"{missing} flagged question(s) without exactly one differing triple (in the denominator, in no outcome)"


def stale_functional(ctx: AuditContext, split: str) -> Value:
    """Questions of the split flagged ``stale_functional``."""
    flagged = _flagged(ctx, split, "stale_functional")
    return Value(len(flagged), note=_not_evaluable_note(len(_evaluable(flagged, "S_stale")), len(flagged)))


def _variant_valid(question: Mapping[str, Any], variant: str) -> bool | None:
    """Whether a differing variant triple is valid at ``t_query`` (``None``: nothing differs)."""
    _, new = differing(question, variant)
    if not new:
        return None
    tq = float(question["t_query"])
    return any(valid_at(t, tq) for t in new)


def stale_valid(ctx: AuditContext, split: str, share: bool = False) -> Value:
    """Flagged-functional stale negatives valid at ``t_query``, of every flagged question."""
    flagged = _flagged(ctx, split, "stale_functional")
    states = [_variant_valid(q, "S_stale") for q in flagged]
    n = sum(s is True for s in states)
    empty = sum(s is None for s in states)
    note = f"{empty} flagged question(s) whose S_stale equals S_star" if empty else None
    if share:
        return _share(n, len(flagged), "functional stale questions")
    return Value(n, of=len(flagged), note=note)


def _pair_scores(ctx: AuditContext, pairs: list[tuple[dict, dict, dict]]) -> list[tuple[float, float]]:
    """BM25 (query = question text) of the gold hop's and the replacement's documents."""
    index = ctx.index
    out = []
    for q, gold, new in pairs:
        text = str(q.get("question", ""))
        out.append((bm25_text_score(index.bm25, text, triple_document(index, gold)),
                    bm25_text_score(index.bm25, text, triple_document(index, new))))
    return out


def stale_ties(ctx: AuditContext, split: str, share: bool = False) -> Value:
    """Flagged-functional stale pairs whose gold hop and replacement tie exactly, of every flagged question."""
    flagged = _flagged(ctx, split, "stale_functional")
    scored = _pair_scores(ctx, _evaluable(flagged, "S_stale"))
    ties = sum(g == s for g, s in scored)
    if share:
        return _share(ties, len(flagged), "functional stale questions")
    return Value(ties, of=len(flagged), note=_not_evaluable_note(len(scored), len(flagged)))


def dist_compare(ctx: AuditContext, split: str, outcome: str) -> Value:
    """BM25 gold hop vs distractor over the flagged-functional questions of the split.

    ``pairs`` is the number of flagged questions; ``higher``/``lower``/``tie``
    count the evaluable pairs by outcome and their ``*_share`` divides by
    ``pairs``; ``wins_nonties = higher / (higher + lower)``.
    """
    flagged = _flagged(ctx, split, "dist_functional")
    scored = _pair_scores(ctx, _evaluable(flagged, "S_dist"))
    note = _not_evaluable_note(len(scored), len(flagged))
    n = len(flagged)
    higher = sum(g > d for g, d in scored)
    lower = sum(g < d for g, d in scored)
    tie = sum(g == d for g, d in scored)
    if outcome == "pairs":
        return Value(n, note=note)
    counts = {"higher": higher, "lower": lower, "tie": tie}
    if outcome in counts:
        return Value(counts[outcome], of=n, note=note)
    if outcome.endswith("_share") and outcome.removesuffix("_share") in counts:
        if n == 0:
            raise NotComputable("no functional distractor questions")
        return Value(counts[outcome.removesuffix("_share")] / n, note=note)
    if outcome == "wins_nonties":
        if higher + lower == 0:
            raise NotComputable("no untied distractor pairs")
        return Value(higher / (higher + lower), note=f"{higher} of {higher + lower} non-tied pairs")
    raise ConfigError(f"dist_compare: unknown outcome {outcome!r}")


def dist_invalid(ctx: AuditContext, split: str = "all", functional: bool = False) -> Value:
    """Share of released distractors invalid at ``t_query``.

    Population: the questions of ``split`` (``all`` = every split) whose
    ``S_dist`` differs from ``S_star``, restricted to ``dist_functional`` ones
    when ``functional``; a question's distractor is invalid when no differing
    ``S_dist`` triple is valid at its ``t_query``.
    """
    qs = _flagged(ctx, split, "dist_functional") if functional else ctx.split_questions(split)
    states = [s for s in (_variant_valid(q, "S_dist") for q in qs) if s is not None]
    if not states:
        raise NotComputable(f"no distractors in the {split} split{' (functional)' if functional else ''}")
    invalid = sum(not s for s in states)
    skipped = len(qs) - len(states)
    note = f"{invalid} of {len(states)}" + (f"; {skipped} question(s) whose S_dist equals S_star left out" if skipped else "")
    return Value(invalid / len(states), note=note)


def bm25_documents(ctx: AuditContext) -> Value:
    return Value(int(ctx.index.bm25.N))


def anchor_recall(ctx: AuditContext, config: str = "nonoracle", over: str = "resolved") -> Value:
    """Share of the split's questions whose linker anchor is the gold first-hop subject's id.

    The gold id is ``S_star[0]`` resolved as the oracle resolves it (SPEC
    §2.3); the linker's anchor is the ``anchor.id`` of ``config``'s run record
    (a question missing from the run is a miss). ``over="resolved"``: questions
    with a gold id; ``over="all"``: every question of the split.
    """
    from retriever.anchors import OracleAnchor

    if over not in ("resolved", "all"):
        raise ConfigError(f"anchor_recall: unknown over {over!r} (expected resolved or all)")
    linked = ctx.run(config)
    kg = ctx.index.kg
    oracle = OracleAnchor(kg.entity_ids, kg.entity_index, ctx.index.entity_labels)
    n = hit = 0
    for q in ctx.split_questions(ctx.split):
        gold_id = oracle.gold_subject(q).id
        if gold_id is None and over == "resolved":
            continue
        n += 1
        rec = linked.get(q["id"]) or {}
        hit += gold_id is not None and (rec.get("anchor") or {}).get("id") == gold_id
    if n == 0:
        raise NotComputable("no question with a gold anchor in the split")
    return Value(hit / n, note=f"{hit} of {n}")


def slice_metric(ctx: AuditContext, config: str, field: str, value: str, metric: str) -> Value:
    agg = ctx.scores(config)["trp_ccr"]
    per = agg.get(f"by_{field}", {})
    if value not in per:
        raise NotComputable(f"no {field}={value} questions in the {ctx.split} split")
    return Value(per[value][metric], note=f"n={per[value]['n']}")


def slice_metric_range(ctx: AuditContext, config: str, field: str, exclude: str, metric: str) -> Value:
    per = ctx.scores(config)["trp_ccr"].get(f"by_{field}", {})
    vals = {k: v[metric] for k, v in per.items() if k != exclude}
    if not vals:
        raise NotComputable(f"no {field} other than {exclude} in the {ctx.split} split")
    return Value([min(vals.values()), max(vals.values())], note=", ".join(f"{k} {v:.3f}" for k, v in vals.items()))


def negative_rate(ctx: AuditContext, config: str, name: str) -> Value:
    neg = ctx.scores(config).get("negatives") or {}
    entry = neg.get(name)
    if not isinstance(entry, dict) or entry.get("rate") is None:
        raise NotComputable(f"negative rate {name!r} not available ({'no flags' if ctx.flags is None else 'no evaluable questions'})")
    return Value(entry["rate"], note=f"n={entry.get('n')}")


def copy_tquery_predictions(questions: Sequence[Mapping[str, Any]]) -> dict[Any, str]:
    """The no-retrieval baseline: answer the year of ``t_query`` (its float text when not whole)."""
    out = {}
    for q in questions:
        year = whole_year(q["t_query"])
        out[q["id"]] = str(year) if year is not None else repr(float(q["t_query"]))
    return out


def copy_tquery_em(ctx: AuditContext, split: str, operator: str) -> Value:
    from eval.answers import exact_match, gold_aliases

    qs = [q for q in ctx.split_questions(split) if q.get("operator_type") == operator]
    if not qs:
        raise NotComputable(f"no {operator} questions in the {split} split")
    preds = copy_tquery_predictions(qs)
    hits = sum(exact_match(preds[q["id"]], gold_aliases(q)) for q in qs)
    return Value(hits / len(qs), note=f"{hits} of {len(qs)}")


COMPUTE: dict[str, Callable[..., Value]] = {
    "split_questions": split_questions,
    "split_interval": split_interval,
    "split_interval_share": split_interval_share,
    "leak_interval_count": leak_interval_count,
    "leak_rate": leak_rate,
    "text_contains_year": text_contains_year,
    "stale_functional": stale_functional,
    "stale_valid": stale_valid,
    "stale_ties": stale_ties,
    "dist_compare": dist_compare,
    "dist_invalid": dist_invalid,
    "bm25_documents": bm25_documents,
    "anchor_recall": anchor_recall,
    "slice_metric": slice_metric,
    "slice_metric_range": slice_metric_range,
    "negative_rate": negative_rate,
    "copy_tquery_em": copy_tquery_em,
}


# --------------------------------------------------------------------------- the audit


def run_audit(ctx: AuditContext, claims: Sequence[Claim] | None = None,
              tolerances: Mapping[str, Mapping[str, float]] | None = None,
              select: Sequence[str] = ()) -> list[dict[str, Any]]:
    """Recompute every claim (or those whose id starts with one of ``select``).

    Returns
    -------
    list of dict
        One row per claim: ``id, section, group, what, kind, paper, paper_of,
        reproduced, of, delta, verdict, note, reason, command``.
    """
    if claims is None:
        claims, tolerances = load_claims()
    tolerances = tolerances or {}
    rows = []
    for claim in claims:
        if select and not any(claim.id.startswith(s) for s in select):
            continue
        reason = None
        try:
            got = COMPUTE[claim.compute](ctx, **claim.params)
        except NotComputable as exc:
            got, reason = None, str(exc)
        except TypeError as exc:  # wrong params in the TOML: a config problem, said so
            raise ConfigError(f"claim {claim.id!r}: bad params {claim.params}: {exc}") from None
        reproduced = None if got is None else got.value
        tol = {**tolerances.get(claim.kind, {}), **claim.tolerance}
        notes = [n for n in (claim.note, None if got is None else got.note) if n]
        rows.append({
            "id": claim.id,
            "section": claim.section,
            "group": claim.group,
            "what": claim.what,
            "kind": claim.kind,
            "paper": claim.paper,
            "paper_of": claim.paper_of,
            "reproduced": reproduced,
            "of": None if got is None else got.of,
            "delta": delta(claim.paper, reproduced, claim.kind),
            "verdict": verdict(claim.paper, reproduced, claim.kind, tol),
            "note": "; ".join(notes) if notes else None,
            "reason": reason,
            "command": claim.command,
        })
    return rows


def _decimals(value: Any) -> int:
    text = repr(float(value))
    return max(3, len(text.split(".")[1])) if "." in text and "e" not in text else 3


def format_value(value: Any, kind: str, of: int | None = None, like: Any = None) -> str:
    """Render a paper or reproduced value for a table."""
    if value is None:
        return "-"
    if kind == "range":
        return f"{value[0]:.3f}-{value[1]:.3f}"
    if kind == "count":
        text = f"{int(value):,}"
        return text if of is None else f"{text} of {int(of):,}"
    return f"{float(value):.{_decimals(like if like is not None else value)}f}"


def format_delta(d: Any, kind: str, like: Any = None) -> str:
    """A signed delta, with as many decimals as the paper value (at least 3)."""
    if d is None:
        return "-"
    if kind == "count":
        return f"{int(d):+,}"
    digits = _decimals(like) if like is not None and kind == "rate" else 3
    text = f"{d:+.{digits}f}"
    return "+" + text[1:] if text.startswith("-") and float(text) == 0 else text


def table_rows(rows: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    """``claim | paper | reproduced | delta | verdict`` cells for printing."""
    out = []
    for r in rows:
        reproduced = format_value(r["reproduced"], r["kind"], r["of"], like=r["paper"])
        if r["reproduced"] is None and r["reason"]:
            reproduced = f"- ({r['reason']})"
        out.append([r["what"], format_value(r["paper"], r["kind"], r["paper_of"]), reproduced,
                    format_delta(r["delta"], r["kind"], like=r["paper"]), r["verdict"]])
    return out


AUDIT_COLUMNS = ("claim", "paper", "reproduced", "delta", "verdict")


def verdict_counts(rows: list[dict[str, Any]]) -> dict[str, int]:
    """``{verdict: count}`` over the headline claims, sorted by verdict.

    Alternative readings (``section`` ending in ``-alt``) are shown in the table
    but left out of the count, so each claim of SPEC §4 is counted once.
    """
    counts: dict[str, int] = {}
    for r in rows:
        if not str(r.get("section", "")).endswith("-alt"):
            counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    return dict(sorted(counts.items()))
