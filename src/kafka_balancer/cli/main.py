"""The ``kafka-balancer`` console script.

Subcommands live one per module, ``kafka_balancer.cli.cmd_<name>``; each module exposes
``register(subparsers)`` which adds its parser and sets ``func`` to a callable
``(argparse.Namespace) -> int``. Modules are discovered, so adding a command touches one file.

The edge (docs/errors.md): exit 0 ok, 1 environment failure, 2 bad input, 130 interrupted; an error is
``error: …`` and optionally ``  hint: …`` on stderr, never a usage block or a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import errno
import importlib
import os
import pkgutil
import sys
import warnings
from collections.abc import Sequence
from typing import Any, NoReturn

from kafka_balancer import __version__
from kafka_balancer.errors import BalancerError, ClusterError, InputError

DEBUG_ENV = "KAFKA_BALANCER_DEBUG"


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one ``error:`` line and a hint pointing at ``--help`` (no usage
    block). Subparsers are of the same class (``add_subparsers`` takes the parent's class)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # no prefixes of flags: `cancel --al 1` was `cancel --all` followed by a stray "1"; a flag is named
        # whole or refused with a guess
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        raise InputError(message, hint=f"see {self.prog} --help")


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The whole parser; given ``argv`` whose first word names a command module, only that command's
    (importing every command costs a quarter of a second of start-up that ``plan`` does not need)."""
    import kafka_balancer.cli as cli_pkg

    names = sorted(m.name for m in pkgutil.iter_modules(cli_pkg.__path__) if m.name.startswith("cmd_"))
    first = argv[0] if argv else ""
    only = f"cmd_{first.replace('-', '_')}"
    if only in names:
        parser, sub = _empty_parser()
        importlib.import_module(f"kafka_balancer.cli.{only}").register(sub)
        if first in sub.choices:
            return parser
    parser, sub = _empty_parser()
    for name in names:
        importlib.import_module(f"kafka_balancer.cli.{name}").register(sub)
    return parser


def _empty_parser() -> tuple[Parser, argparse._SubParsersAction[Parser]]:
    parser = Parser(
        prog="kafka-balancer",
        description="Keeps Apache Kafka clusters balanced: brokers, consumers, and the load model between.",
    )
    parser.add_argument("--version", action="version", version=f"kafka-balancer {__version__}")
    return parser, parser.add_subparsers(dest="command", metavar="COMMAND")


def _subparsers(p: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _chosen(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.ArgumentParser:
    """The innermost subparser named in ``argv`` (for hints about its flags)."""
    p = parser
    for word in argv:
        nxt = _subparsers(p).get(word)
        if nxt is not None:
            p = nxt
    return p


def _unrecognized(parser: argparse.ArgumentParser, argv: Sequence[str], extras: list[str]) -> InputError:
    p = _chosen(parser, argv)
    flags = [s for a in p._actions for s in a.option_strings if s.startswith("--")]
    first = extras[0]
    guess = difflib.get_close_matches(first.split("=", 1)[0], flags, n=1, cutoff=0.6) if first.startswith("-") else []
    what = "unknown flag" if first.startswith("-") else "unexpected argument"
    hint = (f"did you mean {guess[0]}? " if guess else "") + f"(see {p.prog} --help)"
    return InputError(f"{p.prog}: {what} {' '.join(extras)}", hint=hint)


def _unknown_flags(parser: argparse.ArgumentParser, argv: Sequence[str]) -> list[str]:
    p = _chosen(parser, argv)
    known = {s for a in [*parser._actions, *p._actions] for s in a.option_strings}
    return [w for w in argv if w.startswith("--") and w != "--" and w.split("=", 1)[0] not in known][:1]


def _render(exc: BalancerError) -> str:
    return exc.render().encode("utf-8", "backslashreplace").decode("utf-8")


def _tame_stdout() -> None:
    """Names the user gave (paths, groups) may hold bytes that are not UTF-8: print them back as given."""
    for stream in (sys.stdout, sys.stderr):
        reconf = getattr(stream, "reconfigure", None)
        if reconf is not None:
            with contextlib.suppress(ValueError, OSError):
                reconf(errors="surrogateescape" if stream is sys.stdout else "backslashreplace")


def _stdout_failed(exc: OSError) -> int:
    """Standard output went away (a closed pipe) or filled up (``> /dev/full``): one line, exit 1."""
    if sys.__stdout__ is not None and sys.stdout is sys.__stdout__:
        # the interpreter flushes stdout once more at exit: let that one succeed quietly
        with contextlib.suppress(OSError, ValueError):
            fd = os.open(os.devnull, os.O_WRONLY)
            os.dup2(fd, sys.__stdout__.fileno())
            os.close(fd)
    if exc.errno == errno.EPIPE:
        return 1  # the reader stopped reading (`| head`): nothing to say, as other tools do
    print(f"error: cannot write to standard output: {exc.strerror or exc}", file=sys.stderr)
    print("  hint: free some space, or send the output elsewhere", file=sys.stderr)
    return 1


def quiet_known_warnings() -> None:
    """Library warnings that say nothing the user can act on, silenced knowingly:

    - PySpark 4 warns on every pandas conversion that it "does not yet fully support pandas >= 3". Its
      package declares ``pandas>=2.2`` with no upper bound; the conversions we use (Arrow-backed
      ``toPandas``/``createDataFrame`` of numeric and string columns) are covered by the Spark tests under the
      pandas the project installs, so the warning is noise on every Spark command.
    - kafka-python's use of deprecated importlib.resources functions (below).
    - pandas 3 deprecations raised inside PySpark's own conversion code (``pser.astype(..., copy=False)``
      in ``pyspark/sql/pandas/types.py``): PySpark's to change, nothing a user can act on; hidden by
      Python's defaults, shown when warnings are on (``PYTHONWARNINGS=default``). Deprecations in our own
      code still show.
    """
    warnings.filterwarnings("ignore", message=r"PySpark does not yet fully support pandas", category=FutureWarning)
    warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"pyspark(\.|$)")
    # kafka-python loads its protocol schemas with importlib.resources' legacy read_text/open_text, which
    # Python 3.11 deprecates (shown with PYTHONWARNINGS=default on every cluster command): kafka-python's to
    # change; the second is attributed to importlib itself, hence the message.
    warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"kafka(\.|$)")
    warnings.filterwarnings("ignore", message=r"(read_text|open_text) is deprecated\. Use files\(\) instead",
                            category=DeprecationWarning)


def main(argv: Sequence[str] | None = None) -> int:
    _tame_stdout()
    quiet_known_warnings()
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv)
    try:
        try:
            try:
                args, extras = parser.parse_known_args(argv)
            except InputError:
                unknown = _unknown_flags(parser, argv)
                if unknown:  # a mistyped flag explains a "required" error that follows from it
                    raise _unrecognized(parser, argv, unknown) from None
                raise
            if extras:
                raise _unrecognized(parser, argv, extras)
        except SystemExit as exc:  # --help and --version: argparse exits 0 after printing
            sys.stdout.flush()
            return int(exc.code or 0)
        if not getattr(args, "func", None):
            names = ", ".join(_subparsers(parser))
            raise InputError("no command given", hint=f"one of: {names} (see kafka-balancer --help)")
        rc = args.func(args)
        sys.stdout.flush()
    except BalancerError as exc:
        print(_render(exc), file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except OSError as exc:
        if exc.errno in (errno.EPIPE, errno.ENOSPC, errno.EIO) and exc.filename is None:
            return _stdout_failed(exc)  # files are written through files.outputs, which names them
        if exc.errno in (errno.ENAMETOOLONG, errno.ELOOP) and exc.filename is not None:
            return _bad_path(exc, argv)  # a path no file can have: bad input wherever it was first touched
        return _unexpected(exc)
    except MemoryError:
        print("error: out of memory", file=sys.stderr)
        print("  hint: give the command a smaller size, or free memory", file=sys.stderr)
        return 1
    except Exception as exc:  # a bug: one line, the traceback only on request
        lost = _cluster_lost(exc)
        if lost is not None:
            print(_render(lost), file=sys.stderr)
            return lost.exit_code
        return _unexpected(exc)
    return int(rc or 0)


def _cluster_lost(exc: Exception) -> ClusterError | None:
    """A kafka-python connection error that outlasted the command's retries (every call to a live cluster
    is tried again while a broker that died is being fenced): the cluster, not a bug. None for anything
    else, or when kafka-python was never imported."""
    errors = sys.modules.get("kafka.errors")
    if errors is None:
        return None
    kinds = tuple(getattr(errors, n) for n in ("KafkaConnectionError", "KafkaTimeoutError", "NoBrokersAvailable")
                  if hasattr(errors, n))
    if not isinstance(exc, kinds):
        return None
    name = type(exc).__name__
    text = str(exc).splitlines()[0][:200] if str(exc) else name
    what = text if text.startswith(name) else f"{name}: {text}"  # kafka-python's own text names it
    return ClusterError(f"the cluster stopped answering: {what}",
                        hint="check that the brokers in --bootstrap run and are reachable, then run the command "
                             "again (`kafka-balancer local-cluster status` for the local cluster)")


def _bad_path(exc: OSError, argv: Sequence[str]) -> int:
    """A path the file system refuses whatever is on disk (too long, a link loop): exit 2, naming the flag
    that gave it when one did."""
    name = os.fsdecode(exc.filename)
    given = [(argv[i], argv[i + 1]) for i in range(len(argv) - 1) if argv[i].startswith("--")]
    given += [tuple(a.split("=", 1)) for a in argv if a.startswith("--") and "=" in a]  # type: ignore[misc]
    # the flag whose value the path holds; of several (``--port 1`` and a path under a folder named 0411),
    # the longest value
    found = [(len(value), flag) for flag, value in given if value and value in name]
    flag = max(found)[1] if found else None
    shown = name if len(name) <= 120 else name[:100] + "…"
    print(f"error: {flag + ' ' if flag else ''}{shown}: {exc.strerror}".encode("utf-8", "backslashreplace").decode(),
          file=sys.stderr)
    print("  hint: give another path (a file name has at most 255 bytes, a path at most 4096)", file=sys.stderr)
    return 2


def _unexpected(exc: BaseException) -> int:
    if os.environ.get(DEBUG_ENV):
        raise exc
    text = str(exc).splitlines()[0][:300] if str(exc) else ""
    print(f"error: internal error: {type(exc).__name__}: {text}".encode("utf-8", "backslashreplace").decode(),
          file=sys.stderr)
    print(f"  hint: this is a bug in kafka-balancer; {DEBUG_ENV}=1 shows the traceback", file=sys.stderr)
    return 1


def entry() -> None:
    sys.exit(main())


if __name__ == "__main__":
    sys.exit(main())
