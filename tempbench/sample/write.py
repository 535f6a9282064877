"""Write a generated world and its benchmark in the release layout (SPEC §1.5).

The edge list is the large file (about 300 MB at 10M rows): it is formatted by
numpy in blocks of rows (:func:`join_lines`), byte for byte what a Python
``f"{ts},{head},{tail},{relation}"`` per row gives, without a Python string
per row.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np

from tempbench.sample.builder import EdgeColumns, build_benchmark
from tempbench.sample.scales import Scale
from tempbench.sample.world import build_world
from tempbench_core import atomic
from tempbench_core import layout as paths
from tempbench_core.digest import sha256_file
from tempbench_core.progress import progress

EDGELIST_HEADER = "ts,head,tail,relation_type\n"
CHUNK_ROWS = 1_000_000  # rows formatted per block: bounds the memory of a 10M-row file


class TokenTable:
    """Byte strings as a padded ``uint8`` matrix plus their lengths, for vectorised line assembly.

    Row ``i`` of ``matrix`` holds the UTF-8 bytes of ``tokens[i]`` (padding past
    ``lengths[i]`` is never copied).
    """

    def __init__(self, tokens: list[str]) -> None:
        encoded = [t.encode("utf-8") for t in tokens]
        self.lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
        width = int(self.lengths.max()) if len(encoded) else 0
        padded = b"".join(e.ljust(width, b"\0") for e in encoded)
        self.matrix = np.frombuffer(padded, dtype=np.uint8).reshape(len(encoded), width)


def join_lines(columns: list[tuple[TokenTable, np.ndarray]], sep: str = ",") -> bytes:
    """``sep``-joined lines, one per row: field ``k`` of row ``i`` is ``columns[k][0]``'s token ``columns[k][1][i]``.

    The same bytes as ``"".join(sep.join(field, …) + "\n" …)`` in Python, built
    with numpy: line offsets from the token lengths, then one 2-D scatter per
    column and token length, so no Python object is made per row.
    """
    n = len(columns[0][1])
    lengths = [table.lengths[idx] for table, idx in columns]
    line = sum(lengths) + len(columns)  # the fields, their separators and the newline
    ends = np.cumsum(line)
    buf = np.empty(int(ends[-1]) if n else 0, dtype=np.uint8)
    pos = ends - line
    sep_byte = sep.encode("utf-8")
    if len(sep_byte) != 1:
        raise ValueError(f"separator {sep!r} must be one byte")
    for k, ((table, idx), ln) in enumerate(zip(columns, lengths, strict=True)):
        widths = np.unique(ln).tolist()
        for width in widths:
            rows = slice(None) if len(widths) == 1 else np.flatnonzero(ln == width)
            if width:
                buf[pos[rows][:, None] + np.arange(width)] = table.matrix[idx[rows], :width]
        pos = pos + ln
        buf[pos] = sep_byte[0] if k < len(columns) - 1 else ord("\n")
        pos += 1
    return buf.tobytes()


def write_edgelist(path: Path, head: np.ndarray, tail: np.ndarray, relation: np.ndarray, year: np.ndarray,
                   entity_ids: list[str], relation_ids: list[str]) -> None:
    """Write the TGB CSV (header ``ts,head,tail,relation_type``, one line per row) atomically.

    Formatted in blocks of :data:`CHUNK_ROWS` rows by :func:`join_lines`: a
    10M-row file never holds its text, or a Python string per row, in memory.
    """
    ents, rels = TokenTable(entity_ids), TokenTable(relation_ids)
    ymin = int(year.min()) if len(year) else 0
    years = TokenTable([str(y) for y in range(ymin, (int(year.max()) if len(year) else ymin) + 1)])
    starts = range(0, len(year), CHUNK_ROWS)
    with atomic.atomic_open(path, "wb") as handle:
        handle.write(EDGELIST_HEADER.encode("utf-8"))
        for a in progress(starts, total=len(starts), description="writing the edge list"):
            b = a + CHUNK_ROWS
            handle.write(join_lines([(years, year[a:b] - ymin), (ents, head[a:b]), (ents, tail[a:b]), (rels, relation[a:b])]))


def labels_text(entity_ids: list[str], relation_ids: list[str], labels: dict[str, str]) -> str:
    """``id<TAB>label`` with a header; entities then relations, ids without a label omitted."""
    rows = ["id\tlabel"]
    for i in list(entity_ids) + list(relation_ids):
        lab = labels.get(i)
        if lab:
            rows.append(f"{i}\t{lab}")
    return "\n".join(rows) + "\n"



def write_sample(out: Path, scale: str | Scale, seed: int) -> Path:
    """Generate and write; see :func:`tempbench.sample.generate_sample`."""
    world = build_world(scale, seed)
    bench = build_benchmark(EdgeColumns.of(world), world.labels, target_n=world.scale.n_questions, seed=seed + 1)

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.parent / f".{out.name}.tmp-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    try:
        files = {
            paths.KG_FILE: lambda p: write_edgelist(p, world.head, world.tail, world.relation, world.year,
                                                    world.entity_ids, world.relation_ids),
            paths.LABELS_TSV: lambda p: atomic.write_text(p, labels_text(world.entity_ids, world.relation_ids, world.labels)),
            paths.BENCHMARK_LABELLED: lambda p: atomic.write_jsonl(p, bench.labelled),
            paths.BENCHMARK_IDS: lambda p: atomic.write_jsonl(p, bench.ids),
            paths.FLAGS_FILE: lambda p: atomic.write_jsonl(p, bench.flags),
        }
        manifest_files = {}
        for name, write in files.items():
            target = tmp / name
            write(target)
            manifest_files[name] = {"sha256": sha256_file(target), "bytes": target.stat().st_size}
        splits: dict[str, int] = {}
        for rec in bench.labelled:
            splits[rec["split"]] = splits.get(rec["split"], 0) + 1
        manifest = {
            "generator": "tempbench sample (SPEC §5)",
            "scale": world.scale.name,
            "seed": seed,
            "counts": {
                "rows": int(len(world.head)),
                "entities": int(np.count_nonzero(np.bincount(np.concatenate([world.head, world.tail])))),
                "relations": int(len(np.unique(world.relation))),
                "labels": sum(1 for i in world.entity_ids + world.relation_ids if world.labels.get(i)),
                "year_min": int(world.year.min()),
                "year_max": int(world.year.max()),
                "questions": len(bench.labelled),
                "splits": {k: splits[k] for k in sorted(splits)},
                "interval": sum(1 for r in bench.labelled if r["operator_type"] == "interval"),
                "stale_functional": sum(1 for f in bench.flags if f["stale_functional"]),
                "dist_functional": sum(1 for f in bench.flags if f["dist_functional"]),
            },
            "files": manifest_files,
        }
        atomic.write_json(tmp / "MANIFEST.json", manifest)
        _move_into_place(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


def _move_into_place(tmp: Path, out: Path) -> None:
    """Put the finished ``tmp`` directory in place as ``out``.

    A new ``out`` is one rename. An ``out`` generated before keeps every file the
    generator did not write (a user's notes, a ``baselines/`` folder): its
    manifest goes first (a half-updated folder never looks complete), then each
    generated file replaces its old copy, then the new manifest. When another
    process finished the same sample first (``out`` appeared with its manifest
    between our check and our rename), its copy is kept: same seed, same bytes.
    """
    if not out.exists():
        try:
            os.replace(tmp, out)
        except OSError:
            if not (out / paths.MANIFEST).is_file():
                raise
            shutil.rmtree(tmp, ignore_errors=True)
        return
    (out / paths.MANIFEST).unlink(missing_ok=True)
    for source in sorted(tmp.rglob("*")):
        if source.is_file() and source.name != paths.MANIFEST:
            target = out / source.relative_to(tmp)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(source, target)
    os.replace(tmp / paths.MANIFEST, out / paths.MANIFEST)
    shutil.rmtree(tmp, ignore_errors=True)
