"""The ``opendml`` command: run and validate DxDispatch JSON operator models, and show the bundled examples.

::

    opendml run MODEL.json [--feature-level 5_1] [--print-format dxdispatch|numbers]
    opendml validate MODEL.json [--feature-level 5_1]
    opendml examples [NAME ...] [--print-format numbers|dxdispatch] [--dir]
    opendml info

Results go to stdout; warnings and errors to stderr, as ``opendml: error: <file>:<line>:<column>: <JSON path>:
<message>``. Exit status: 0 success, 1 an invalid model or operator (or a failed run, or an output that cannot be
written), 2 a usage error (bad arguments, a model file that cannot be read), 141 when the reader of stdout went
away (``opendml examples | head -1``), as for a command that SIGPIPE ends.
"""

from __future__ import annotations

import argparse
import codecs
import functools
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from .device import Device
from .dxdispatch import (
    Diagnostics,
    InvalidModel,
    Location,
    ModelError,
    PrintFormat,
    Session,
    bundled_models,
    load_model,
    models_dir,
)
from .enums import FeatureLevel
from .runtime import runtime_info

__all__ = ["main"]

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2
EXIT_BROKEN_PIPE = 128 + 13  # what a shell reports for a command ended by SIGPIPE


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (default: ``sys.argv[1:]``); return the exit status."""
    try:
        args = _parser().parse_args(argv)
    except SystemExit as stop:  # --help, or a usage error argparse has already reported
        return stop.code if isinstance(stop.code, int) else EXIT_USAGE
    _keep_raw_bytes(sys.stdout)
    try:
        status = args.handler(args)
        sys.stdout.flush()
    except OSError as error:  # every other OSError is caught where it happens: this one is stdout's or stderr's
        return _output_failed(error)
    return status


def _output_failed(error: OSError) -> int:
    """stdout or stderr cannot be written: a reader went away (BrokenPipeError), or the device is full (/dev/full).

    A lost reader stops the command quietly, as SIGPIPE would. Any other failure is said in one line on stderr.
    A stream that cannot be written is pointed at devnull, so that Python's final flush does not complain (the
    recipe of the documentation of Python's signal module); the other one keeps what was written to it.
    """
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except OSError:
            _to_devnull(stream)
    if isinstance(error, BrokenPipeError):
        return EXIT_BROKEN_PIPE
    try:
        print(f"opendml: error: cannot write the output: {error.strerror or error}", file=sys.stderr, flush=True)
    except OSError:
        _to_devnull(sys.stderr)  # stderr cannot be written either: nothing more can be said
    return EXIT_INVALID


def _to_devnull(stream) -> None:
    os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="opendml",
        description="Run DxDispatch-style JSON operator models on opendml (DirectML's operators on NumPy).",
    )
    commands = parser.add_subparsers(title="commands", required=True, metavar="COMMAND")
    feature_level = dict(
        type=_feature_level,
        default=Device.MAX_FEATURE_LEVEL,
        metavar="LEVEL",
        help=f"the device's DML_FEATURE_LEVEL, e.g. 5_1 (default: {Device.MAX_FEATURE_LEVEL.version})",
    )
    formats = [f.value for f in PrintFormat]

    run = commands.add_parser("run", help="execute a model's commands and print what they print")
    run.add_argument("model", type=Path, metavar="MODEL.json")
    run.add_argument("--feature-level", **feature_level)
    run.add_argument(
        "--print-format",
        choices=formats,
        default=PrintFormat.DXDISPATCH.value,
        help="dxdispatch: DxDispatch's exact text; numbers: INT8/UINT8 as numbers, not characters",
    )
    run.set_defaults(handler=_run)

    validate = commands.add_parser("validate", help="check a model and create its operators without executing")
    validate.add_argument("model", type=Path, metavar="MODEL.json")
    validate.add_argument("--feature-level", **feature_level)
    validate.set_defaults(handler=_validate)

    examples = commands.add_parser("examples", help="run the example models bundled with opendml")
    examples.add_argument("names", nargs="*", metavar="NAME", help="run only these (default: all)")
    examples.add_argument("--feature-level", **feature_level)
    examples.add_argument("--print-format", choices=formats, default=PrintFormat.NUMBERS.value)
    examples.add_argument("--dir", action="store_true", help="print the folder of the bundled models and exit")
    examples.set_defaults(handler=_examples)

    info = commands.add_parser("info", help="show the kernel backends, the compiled ISA variant and threads")
    info.set_defaults(handler=_info)
    return parser


def _info(args: argparse.Namespace) -> int:
    info = runtime_info()
    print(f"backends: {', '.join(info['backends'])} (default: {info['default_backend']})")
    if not info["compiled"]:
        print(f"compiled: not available ({info['compiled_error']})")
        return EXIT_OK
    print(f"compiled ISA: {info['isa']} (available: {', '.join(info['isas'])}; OPENDML_ISA forces a lower one)")
    print(
        f"threads: {info['threads']} of {info['cpus']} CPUs (OPENDML_NUM_THREADS), one thread below "
        f"{info['parallel_min_bytes']} bytes"
    )
    return EXIT_OK


def _feature_level(text: str) -> FeatureLevel:
    for level in FeatureLevel:
        if text in (level.version, level.version.replace("_", "."), level.c_name):
            return level
    valid = ", ".join(level.version for level in FeatureLevel)
    raise argparse.ArgumentTypeError(f"unknown feature level {text!r} (opendml implements {valid})")


def _run(args: argparse.Namespace) -> int:
    print_format = PrintFormat(args.print_format)
    return _check(args.model, args.feature_level, lambda session: session.run(sys.stdout, print_format))


def _validate(args: argparse.Namespace) -> int:
    def report(session: Session) -> list[ModelError]:
        model = session.model
        counts = [
            f"{len(items)} {noun}{'' if len(items) == 1 else 's'}"
            for noun, items in (
                ("resource", model.resources),
                ("dispatchable", model.dispatchables),
                ("command", model.commands),
            )
        ]
        print(f"{args.model}: valid at {args.feature_level.c_name} ({', '.join(counts)})")
        return []

    return _check(args.model, args.feature_level, report)


def _examples(args: argparse.Namespace) -> int:
    if args.dir:
        print(models_dir())
        return EXIT_OK
    models = {path.stem: path for path in bundled_models()}
    unknown = [name for name in args.names if name.removesuffix(".json") not in models]
    if unknown:
        print(f"opendml: error: no bundled model {unknown[0]!r} (bundled: {', '.join(models)})", file=sys.stderr)
        return EXIT_USAGE
    chosen = [models[name.removesuffix(".json")] for name in args.names] or list(models.values())
    show = functools.partial(_show_example, print_format=PrintFormat(args.print_format))
    return max(_check(path, args.feature_level, show, name=path.name) for path in chosen)


def _show_example(session: Session, print_format: PrintFormat) -> list[ModelError]:
    """A header naming and describing the example, then its output, then an empty line."""
    print(f"# {session.model.path.name}: {session.model.description}")
    failures = session.run(sys.stdout, print_format)
    print()
    return failures


def _check(
    path: Path, feature_level: FeatureLevel, action: Callable[[Session], list[ModelError]], name: str | None = None
) -> int:
    """Load ``path``, create its session at ``feature_level``, then ``action``; report and return the status."""
    diagnostics = Diagnostics()
    try:
        # A model with errors is still read as far as it goes: the session then reports the operator problems of
        # every dispatchable that was read (and of every dispatch that could be resolved) before giving up.
        model = load_model(path, diagnostics, name, partial=True)
    except OSError as error:
        print(f"opendml: error: cannot read the model {str(path)!r}: {error.strerror}", file=sys.stderr)
        return EXIT_USAGE
    except MemoryError:  # the model fits in MAX_MODEL_BYTES, but not in this machine's (or this limit's) memory
        model = None
        diagnostics.errors.append(_out_of_memory(path, name))
    if model is not None:
        try:
            diagnostics.errors += action(Session(model, Device(feature_level), diagnostics))
        except InvalidModel:
            pass
        except ModelError as error:  # a dispatch that failed while running
            diagnostics.errors.append(error)
        except MemoryError:  # the resources fit in MAX_RESOURCE_BYTES, but not in this machine's memory
            diagnostics.errors.append(_out_of_memory(path, name))
    for warning in diagnostics.warnings:
        print(f"opendml: warning: {warning}", file=sys.stderr)
    for error in diagnostics.errors:
        print(f"opendml: error: {error}", file=sys.stderr)
    return EXIT_INVALID if diagnostics.errors else EXIT_OK


def _out_of_memory(path: Path, name: str | None) -> ModelError:
    return ModelError(Location(name or str(path)), "not enough memory to run the model")


def _keep_raw_bytes(stream) -> None:
    """Let ``print`` write INT8/UINT8 values as the raw bytes DxDispatch writes (see printing.format_value), and
    escape what the stream cannot encode (a resource named ``"\\ud800"``) rather than fail."""
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(errors=_RAW_BYTES_OR_ESCAPES)


def _raw_bytes_or_escapes(error: UnicodeError) -> tuple[str | bytes, int]:
    try:
        return _SURROGATE_ESCAPE(error)
    except UnicodeError:
        return _BACKSLASH_REPLACE(error)


_SURROGATE_ESCAPE, _BACKSLASH_REPLACE = codecs.lookup_error("surrogateescape"), codecs.lookup_error("backslashreplace")
_RAW_BYTES_OR_ESCAPES = "opendml.raw_bytes_or_escapes"
codecs.register_error(_RAW_BYTES_OR_ESCAPES, _raw_bytes_or_escapes)
