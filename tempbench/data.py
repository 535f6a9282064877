"""The data a command runs on: the user's data root, or the generated default (SPEC §1.5, §5).

Without ``--data`` (and without ``--kg``/``--benchmark``) every command uses the
generated sample under the per-user cache, generating it on first use.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tempbench_core.layout import DEFAULT_SCALE, DEFAULT_SEED, MANIFEST, DataPaths, default_sample_dir, find_inputs
from tempbench_core.provenance import Provenance, absolute, data_options, make_provenance, render_command


def ensure_default_sample(scale: str = DEFAULT_SCALE, seed: int = DEFAULT_SEED) -> Path:
    """Return the default sample directory, generating it on first use."""
    out = default_sample_dir(scale, seed)
    if not (out / MANIFEST).exists():
        # the generator's modules are imported only by a command that generates (not at every start-up)
        from tempbench.sample import generate_sample
        generate_sample(out, scale=scale, seed=seed)
    return out


def resolve_data(
    data: str | Path | None = None,
    kg: str | Path | None = None,
    labels: str | Path | None = None,
    benchmark: str | Path | None = None,
    flags: str | Path | None = None,
) -> DataPaths:
    """Resolve the input files from a data root plus single-file overrides.

    With neither ``data`` nor ``kg``/``benchmark`` given, the generated default
    sample is used (and generated if it is not there yet).
    """
    root = ensure_default_sample() if data is None and kg is None and benchmark is None else data
    return find_inputs(root, kg=kg, labels=labels, benchmark=benchmark, flags=flags)


def add_data_arguments(parser: argparse.ArgumentParser, kg: bool = True, benchmark: bool = True,
                       flags: bool = True) -> None:
    """The shared ``--data/--kg/--labels/--benchmark/--flags`` options (``--flags`` only for a command that reads them)."""
    group = parser.add_argument_group("data (default: the generated sample, SPEC §5)")
    group.add_argument("--data", metavar="DIR", help="data root laid out like the release (SPEC §1.5)")
    if kg:
        group.add_argument("--kg", metavar="CSV", help="TGB edge list; overrides DIR/tkgl-smallpedia_edgelist.csv")
        group.add_argument("--labels", metavar="FILE", help="labels TSV or JSON; overrides DIR/labels.tsv")
    if benchmark:
        group.add_argument("--benchmark", metavar="JSONL", help="benchmark_labelled.jsonl; overrides DIR/benchmark/")
        if flags:
            group.add_argument("--flags", metavar="JSONL", help="functional_negatives.jsonl; default beside the benchmark")


#: ``--cache-dir``'s help, where a command builds or loads the KG index.
CACHE_DIR_HELP = ("index cache folder: one subfolder per KG, named by its fingerprint (default: $TEMPBENCH_CACHE/index, "
                  "else $XDG_CACHE_HOME/tempbench/index or ~/.cache/tempbench/index)")


def data_from_args(args: argparse.Namespace) -> DataPaths:
    """:func:`resolve_data` from parsed :func:`add_data_arguments` options."""
    return resolve_data(
        data=getattr(args, "data", None),
        kg=getattr(args, "kg", None),
        labels=getattr(args, "labels", None),
        benchmark=getattr(args, "benchmark", None),
        flags=getattr(args, "flags", None),
    )


def command_provenance(data: DataPaths, words: Sequence[str], options: Sequence[tuple[str, Any]] = (),
                       kg: bool = True, benchmark: bool = True) -> Provenance:
    """The :class:`~tempbench_core.provenance.Provenance` of a command run on ``data``.

    Its command line is ``tempbench WORDS...``, then ``options`` (those that
    change the output, with the values used: paths absolute, see
    :func:`absolute_or_none`), then the data flags that name exactly
    ``data``'s files (``kg``/``benchmark`` as for :func:`add_data_arguments`),
    so that it reruns to the same bytes from any folder. Options that change
    nothing in the output (``--workers``, ``--cache-dir``, ``--resume``) are
    not recorded, so they cannot make two equal outputs differ.
    """
    command = render_command(words, [*options, *data_options(data, kg=kg, benchmark=benchmark)])
    return make_provenance(data, command, reads_kg=kg)


def config_word(config: str | None) -> str | None:
    """``--config`` as a recorded command gives it: a shipped name as it is, a file's path absolute."""
    from retriever import looks_like_path  # the retriever is imported by the commands that run it, not at start-up

    return absolute_or_none(config) if config is not None and looks_like_path(config) else config


def absolute_or_none(path: str | Path | None) -> str | None:
    """A path option's value as the recorded command gives it: absolute (``None`` stays ``None``)."""
    return None if path is None else absolute(path)
