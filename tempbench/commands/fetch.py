"""``tempbench fetch``: get the real inputs into a data root (SPEC §1.5).

``tempbench fetch tgb --out DIR`` downloads the TGB 2.0 ``tkgl-smallpedia``
archive (TGB's current host, then the old one as a fallback mirror) and
extracts only ``tkgl-smallpedia_edgelist.csv``; ``tempbench fetch release --from
SRC --out DIR`` lays out a TempBench release from a folder, an archive, or a URL
to one. Both record what they laid out in ``DIR/tempbench.lock`` and download
nothing when it is already there.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from tempbench.fetch import (
    TGB_DATASET,
    TGB_URLS,
    FetchError,
    FetchOptions,
    FetchResult,
    fetch_release,
    fetch_tgb,
    parse_size,
)
from tempbench_core.console import info
from tempbench_core.layout import KG_FILE, LOCK_FILE

_DEFAULTS = FetchOptions()


def _size(text: str) -> int:
    try:
        return parse_size(text)
    except FetchError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _positive(kind: type) -> Callable[[str], float]:
    """An argparse type: an int >= 0 or a float > 0 (finite)."""

    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a{'n integer' if kind is int else ' number'}") from None
        if not (value >= 0 if kind is int else 0 < value < float("inf")):
            raise argparse.ArgumentTypeError(f"{text!r} must be {'0 or more' if kind is int else 'more than 0'}")
        return value

    parse.__name__ = kind.__name__
    return parse


def _gib(size: int) -> str:
    return f"{size / (1 << 30):g}G"


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", required=True, metavar="DIR", help="data root to write into (created when missing)")
    parser.add_argument("--force", action="store_true",
                        help="fetch again, and replace files that no fetch recorded (or an unreadable lock)")
    net = parser.add_argument_group("network and bounds")
    net.add_argument("--timeout", type=_positive(float), default=_DEFAULTS.timeout, metavar="SECONDS",
                     help=f"seconds without any byte from the server before an attempt counts as stalled "
                          f"(default {_DEFAULTS.timeout:g})")
    net.add_argument("--retries", type=_positive(int), default=_DEFAULTS.retries, metavar="N",
                     help="further attempts after a stalled, dropped or 5xx transfer, each resuming with an HTTP "
                          f"Range request where the server allows it (default {_DEFAULTS.retries})")
    net.add_argument("--max-download", type=_size, default=_DEFAULTS.max_download, metavar="SIZE",
                     help="refuse a download larger than SIZE, with or without a Content-Length "
                          f"(e.g. 500M, 16G; default {_gib(_DEFAULTS.max_download)})")
    net.add_argument("--max-extract", type=_size, default=_DEFAULTS.max_extract, metavar="SIZE",
                     help=f"refuse to write more than SIZE from an archive or folder in total "
                          f"(default {_gib(_DEFAULTS.max_extract)})")
    net.add_argument("--max-ratio", type=_positive(float), default=_DEFAULTS.max_ratio, metavar="R",
                     help="refuse a zip member (or a tar stream) larger than 16 MiB that expands more than R times "
                          f"its compressed size: a decompression bomb (default {_DEFAULTS.max_ratio:g})")
    parser.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)


_SAFETY = ("Everything received is untrusted: member names that are absolute, hold '..' or a control character, "
           "duplicate names, a name that is both a file and a folder, links and devices, sources that are not "
           "regular files (/dev/zero, a FIFO), URL schemes other than http(s) and invalid headers are refused; "
           "sizes are bounded (see the options). The work is staged in a hidden folder of DIR and moved into place "
           "all together or not at all; SIGTERM, or a later fetch, removes what an interrupted one left. URLs are "
           "stored and printed without credentials or query values. Errors exit 2.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``tempbench fetch``: one sub-command per source."""
    parser.epilog = ("After fetching both: 'tempbench check --data DIR' says whether DIR is what the pipeline "
                     f"expects (and whether its files still match {LOCK_FILE}), then 'tempbench reproduce --data "
                     "DIR'. See data/README.md.")
    sub = parser.add_subparsers(dest="what", metavar="WHAT", required=True)
    tgb = sub.add_parser(
        "tgb", help=f"download the TGB 2.0 {TGB_DATASET} archive and extract {KG_FILE}",
        description=(f"Download the TGB 2.0 {TGB_DATASET} archive (streamed, with a progress bar on a terminal; "
                     "stalled or dropped transfers are retried and resumed), verify it, and extract only "
                     f"{KG_FILE} into DIR. Sources, in order: TGB's current host {TGB_URLS[0]}, then the old "
                     f"{TGB_URLS[1]} as a fallback mirror; --url replaces both. Size, sha256, source and date of "
                     f"the edge list go to DIR/{LOCK_FILE}; a second call finds the file recorded there and "
                     f"downloads nothing. {_SAFETY}"),
    )
    tgb.add_argument("--url", default=None, metavar="URL",
                     help="archive URL (http or https; user:password@ is sent as HTTP Basic auth) or local path "
                          "(default: TGB's current host, then the old one)")
    _add_common(tgb)
    release = sub.add_parser(
        "release", help="lay out a TempBench release (benchmark/, baselines/, labels) from a folder, archive or URL",
        description=("Lay out a TempBench release in DIR as SPEC §1.5 expects: the benchmark files into "
                     "DIR/benchmark/, a labels file (labels.tsv or labels.json) and baselines/ when the release "
                     "has them. SRC is a local folder (e.g. one written by 'hf download ... --repo-type dataset "
                     "--local-dir SRC'), a .zip/.tar.gz archive, or an http(s) URL to one. Size, sha256, source and "
                     f"date of every file go to DIR/{LOCK_FILE}; a second call with unchanged files does nothing. "
                     f"{_SAFETY}"),
    )
    release.add_argument("--from", dest="source", required=True, metavar="SRC", help="release folder, archive, or URL")
    release.add_argument("--revision", metavar="REV",
                         help="the Hugging Face revision SRC was downloaded at ('hf download --revision REV'), "
                              "recorded in the lock")
    _add_common(release)


def _options(args: argparse.Namespace) -> FetchOptions:
    return FetchOptions(timeout=args.timeout, retries=args.retries, max_download=args.max_download,
                        max_extract=args.max_extract, max_ratio=args.max_ratio)


def _report(result: FetchResult, out: str) -> None:
    for note in result.notes:
        info(note)
    for rel, rec in sorted(result.files.items()):
        info(f"  {rel}: {rec['bytes']:,} bytes, sha256 {rec['sha256']}")
    info(("recorded in " if result.downloaded else "nothing downloaded; record: ") + str(result.lock))
    info(f"next: tempbench check --data {out}")


def run(args: argparse.Namespace) -> int:
    """Fetch; exit 0, or 2 (via :class:`~tempbench.fetch.FetchError`) when anything went wrong."""
    options = _options(args)
    if args.what == "tgb":
        result = fetch_tgb(args.out, url=args.url, force=args.force, options=options)
    else:
        result = fetch_release(args.source, args.out, force=args.force, options=options, revision=args.revision)
    _report(result, args.out)
    return 0
