"""``tempbench fetch``: get the real inputs into a data root (SPEC §1.5).

``tempbench fetch tgb --out DIR`` downloads the TGB 2.0 ``tkgl-smallpedia``
archive and extracts only ``tkgl-smallpedia_edgelist.csv``;
``tempbench fetch release --from SRC --out DIR`` lays out a TempBench release
from a folder, an archive, or a URL to one. Both record what they fetched in
``DIR/provenance.json`` and download nothing when it is already there.
"""

from __future__ import annotations

import argparse

from tempbench.fetch import TGB_DATASET, TGB_URL, FetchResult, fetch_release, fetch_tgb
from tempbench_core.console import info
from tempbench_core.layout import KG_FILE, PROVENANCE


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``tempbench fetch``: one sub-command per source."""
    parser.epilog = ("After fetching both: 'tempbench check --data DIR' says whether DIR is what the pipeline "
                     "expects, then 'tempbench reproduce --data DIR'. See data/README.md.")
    sub = parser.add_subparsers(dest="what", metavar="WHAT", required=True)
    tgb = sub.add_parser(
        "tgb", help=f"download the TGB 2.0 {TGB_DATASET} archive and extract {KG_FILE}",
        description=(f"Download the TGB 2.0 {TGB_DATASET} archive (streamed, with a progress bar on a terminal), "
                     f"verify it, and extract only {KG_FILE} into DIR. Source, size and sha256 of the archive and "
                     f"of the edge list go to DIR/{PROVENANCE}; a second call finds the file recorded there and "
                     "downloads nothing. Errors (HTTP status, interrupted transfer, corrupt archive, missing member) "
                     "exit 2 and leave no partial file."),
    )
    tgb.add_argument("--url", default=TGB_URL, metavar="URL",
                     help=f"archive URL or local path (default: the URL TGB's own package uses, {TGB_URL})")
    tgb.add_argument("--out", required=True, metavar="DIR", help="data root to write into (created when missing)")
    tgb.add_argument("--force", action="store_true",
                     help="download again, and replace an edge list that no fetch recorded")
    tgb.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    release = sub.add_parser(
        "release", help="lay out a TempBench release (benchmark/, baselines/, labels) from a folder, archive or URL",
        description=("Lay out a TempBench release in DIR as SPEC §1.5 expects: the benchmark files into "
                     "DIR/benchmark/, a labels file (labels.tsv or labels.json) and baselines/ when the release "
                     "has them. SRC is a local folder (e.g. one written by 'hf download ... --repo-type dataset "
                     "--local-dir SRC'), a .zip/.tar.gz archive, or an http(s) URL to one. The record goes to "
                     f"DIR/{PROVENANCE}; a second call with unchanged files does nothing."),
    )
    release.add_argument("--from", dest="source", required=True, metavar="SRC", help="release folder, archive, or URL")
    release.add_argument("--out", required=True, metavar="DIR", help="data root to write into (created when missing)")
    release.add_argument("--force", action="store_true", help="fetch again, and replace files that no fetch recorded")
    release.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)


def _report(result: FetchResult, out: str) -> None:
    for note in result.notes:
        info(note)
    for rel, rec in sorted(result.files.items()):
        info(f"  {rel}: {rec['bytes']:,} bytes, sha256 {rec['sha256']}")
    info(("recorded in " if result.downloaded else "nothing downloaded; record: ") + str(result.provenance))
    info(f"next: tempbench check --data {out}")


def run(args: argparse.Namespace) -> int:
    """Fetch; exit 0, or 2 (via :class:`~tempbench.fetch.FetchError`) when anything went wrong."""
    if args.what == "tgb":
        result = fetch_tgb(args.out, url=args.url, force=args.force)
    else:
        result = fetch_release(args.source, args.out, force=args.force)
    _report(result, args.out)
    return 0
