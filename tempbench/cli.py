"""The ``tempbench`` command: one entry point, one module per subcommand.

Each subcommand module defines ``add_arguments(parser)`` and ``run(args) -> int``.
Only the module of the chosen subcommand is imported, so ``tempbench --help``
and every command start quickly.

Exit codes: 0 success, 2 user error (bad input or arguments), 1 internal error
(``--debug`` shows its traceback).
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import os
import re
import signal
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from tempbench_core.errors import TempbenchError
from tempbench_core.memory import gc_paused
from tempbench_core.text import terminal_text
from tempbench_core.version import __version__

# name -> (module, one-line help). Order is the order shown by --help.
COMMANDS: dict[str, tuple[str, str]] = {
    "reproduce": ("tempbench.commands.reproduce", "run the four paper configurations, score, audit, diff and write a report"),
    "fetch": ("tempbench.commands.fetch", "download the TGB edge list or lay out a TempBench release into a data root"),
    "check": ("tempbench.commands.check", "check a data root: files, counts beside the card, labels, gold hops, anchors"),
    "sample": ("tempbench.commands.sample", "generate the TempBench-like stand-in data (SPEC §5)"),
    "build-benchmark": ("tempbench.commands.build_benchmark", "build a TempBench-style benchmark from any TGB edge list"),
    "index": ("tempbench.commands.index", "build (or load from cache) the KG arrays and the BM25 index"),
    "labels": ("tempbench.commands.labels", "harvest entity/relation labels from the benchmark files"),
    "run": ("tempbench.commands.run", "run the reference retriever and write a run file (SPEC §6.1)"),
    "score": ("tempbench.commands.score", "score a run: TRP/CCR, negatives, rank metrics, ties, intervals (SPEC §3)"),
    "score-answers": ("tempbench.commands.score_answers", "answer EM/F1, overall and without the interval slice (SPEC §3.6)"),
    "compare": ("tempbench.commands.compare", "paired comparison of two runs on the same questions (SPEC §3.7)"),
    "repro": ("tempbench.commands.repro", "how close a reproduction is: KTU, RBO, RMSE, t-test, ER, ΔRI of paired runs (SPEC §8)"),
    "export-trec": ("tempbench.commands.export_trec", "write runs as TREC run files with stable document ids, plus one shared qrels file"),
    "audit": ("tempbench.commands.audit", "recompute the dataset card's claims from data (SPEC §4)"),
    "diff": ("tempbench.commands.diff", "diff a run against published baselines or another run (SPEC §6.3)"),
    "explain": ("tempbench.commands.explain", "attribute every gold hop of a run to the stage that loses it (SPEC §7)"),
    "show": ("tempbench.commands.show", "one question at a glance: gold chain with stages, anchor, pool, ranked evidence"),
}


class _Parser(argparse.ArgumentParser):
    """An :class:`argparse.ArgumentParser` whose messages are terminal-safe.

    argparse quotes what the user typed ("unrecognized arguments: ...") as it
    is; an argument pasted from a file may hold an ESC or BEL.
    """

    #: The parser of the chosen subcommand, whose options a mistyped one is matched against.
    suggest_from: argparse.ArgumentParser | None = None
    #: The command line as typed (a required option reported missing may be there, mistyped).
    typed: tuple[str, ...] = ()

    def _print_message(self, message: str, file: Any = None) -> None:
        super()._print_message(terminal_text(message, keep_newlines=True) if message else message, file)

    def error(self, message: str) -> NoReturn:
        """Exit 2 with the message and a did-you-mean for a mistyped subcommand, option or choice."""
        child = self.suggest_from
        if child is not None and message.startswith("unrecognized arguments: "):
            child.error(message)  # the subcommand's usage and options, not the top level's
        super().error(message + suggestion(message, self, self.typed))


def suggestion(message: str, parser: argparse.ArgumentParser, typed: Sequence[str] = ()) -> str:
    """`` (did you mean ...?)`` for what an argparse error ``message`` says is wrong, else ``""``.

    An invalid choice (a subcommand, an option's value) is matched against the
    choices the message lists; an unrecognized option against the options of
    ``parser`` (:func:`difflib.get_close_matches`, as :func:`~tempbench_core.errors.did_you_mean`);
    for a missing required option, the options of ``typed`` that ``parser`` does not know.
    """
    choice = re.search(r"invalid choice: '(.*?)' \(choose from (.*)\)$", message)
    if choice:
        close = difflib.get_close_matches(choice.group(1), re.findall(r"'([^']*)'", choice.group(2)), n=1)
        return f" (did you mean {close[0]!r}?)" if close else ""
    options = _long_options(parser)
    if message.startswith("unrecognized arguments: "):
        tokens = message[len("unrecognized arguments: "):].split()
    elif message.startswith("the following arguments are required: "):
        tokens = [a for a in typed if a.startswith("--") and a.split("=", 1)[0] not in options]
    else:
        return ""
    hints = []
    for token in tokens:
        if token.startswith("--"):
            close = difflib.get_close_matches(token.split("=", 1)[0], options, n=1)
            if close:
                hints.append(f"{token.split('=', 1)[0]}: did you mean {close[0]}?")
    return f" ({'; '.join(hints)})" if hints else ""


def _parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """``parser`` and the parsers of its subcommands, at any depth."""
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                found += _parsers(child)
    return found


def _long_options(parser: argparse.ArgumentParser) -> list[str]:
    """The ``--`` options of ``parser`` and of its subcommands' parsers (``fetch tgb``'s), in order, once each."""
    return list(dict.fromkeys(o for each in _parsers(parser) for o in each._option_string_actions if o.startswith("--")))


def build_parser(selected: str | None, typed: Sequence[str] = ()) -> argparse.ArgumentParser:
    """Parser with every subcommand listed; only ``selected`` gets its options (``typed``: the command line, for hints)."""
    parser = _Parser(
        prog="tempbench",
        description=(
            "Reproduce the TempBench BFS+BM25 reference retriever and its TRP/CCR "
            "evaluation from the TGB tkgl-smallpedia edge list. Every command runs on "
            "the generated stand-in data unless given --data DIR."
        ),
        epilog="Run 'tempbench COMMAND --help' for the options of one command.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("--debug", action="store_true", help="show full tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module_name, help_text) in COMMANDS.items():
        child = sub.add_parser(name, help=help_text, description=help_text)
        child.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show full tracebacks on errors")
        if name == selected:
            importlib.import_module(module_name).add_arguments(child)
            parser.suggest_from = child
            for each in (parser, *_parsers(child)):
                each.typed = tuple(typed)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point; returns the process exit code.

    A closed stdout (``tempbench score RUN | head``) ends any command quietly
    with exit status 0: what was asked for was read. stdout is flushed here,
    where a closed pipe is caught (``--help`` included, which argparse ends
    with SystemExit), not at the interpreter's exit; then pointed at
    ``/dev/null`` so that the last flush cannot fail again.
    """
    try:
        try:
            code = _main(argv)
        except SystemExit:
            sys.stdout.flush()
            raise
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        _stdout_to_devnull()
        return 0
    except KeyboardInterrupt:  # before the command started (its import, the parser): _main says it from then on
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        print("tempbench: interrupted", file=sys.stderr)
        return 130


def _stdout_to_devnull() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass  # no real stdout (tests capture it): nothing will be flushed to a closed pipe


def _main(argv: Sequence[str] | None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    selected = next((a for a in args_list if not a.startswith("-")), None)
    if selected not in COMMANDS:
        selected = None
    parser = build_parser(selected, args_list)
    args = parser.parse_args(args_list)
    if args.command is None:
        parser.print_help()
        return 2
    debug = bool(getattr(args, "debug", False))
    try:
        module = importlib.import_module(COMMANDS[args.command][0])
        # A command reads runs, benchmarks and labels (millions of objects that stay alive) and makes millions more:
        # with the cyclic collector running, each of its full collections would walk them all again.
        with gc_paused():
            code = module.run(args)
        return int(code or 0)
    except TempbenchError as exc:
        if debug:
            raise
        # A message names files and quotes data: escaped like every other terminal text.
        text = terminal_text(exc, keep_newlines=exc.multiline)
        print(f"tempbench {args.command}: error: {text}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        # a second Ctrl-C while we clean up must not print a traceback
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        print("tempbench: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        raise  # main's to handle, wherever it happens
    except Exception as exc:  # noqa: BLE001 - last line of defence
        if debug:
            raise
        if isinstance(exc, OSError) and exc.filename is not None:
            # A path the user gave that cannot be read or written (a directory
            # where a file belongs, no permission, disk full) is their mistake.
            print(f"tempbench {args.command}: error: cannot use {terminal_text(exc.filename)}: {exc.strerror}",
                  file=sys.stderr)
            return 2
        print(
            f"tempbench {args.command}: internal error: {type(exc).__name__}: {terminal_text(exc, keep_newlines=True)}\n"
            "This is a bug; rerun with --debug for the traceback and report it.",
            file=sys.stderr,
        )
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
