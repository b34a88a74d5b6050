"""``streams-runtime describe --app module:attr [--format text|svg|dot|mermaid] [--output FILE]``.

Prints the topology the app builds (nothing is started, no broker is needed): Kafka Streams'
text, or the picture of :mod:`streams_runtime.processor.topology_graph` as SVG, DOT or Mermaid.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from streams_runtime.processor.topology_graph import FORMATS, render


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("describe", help="print an app's topology (text, svg, dot or mermaid)")
    parser.add_argument("--app", required=True, help="module:attr of a function returning (Topology, config)")
    parser.add_argument("--format", choices=FORMATS, default="text", help="output format (default text)")
    parser.add_argument("--output", default=None, help="write to this file instead of stdout")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from streams_runtime.worker import load_app

    definition = load_app(args.app)
    text = render(definition.topology, args.format)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"wrote {args.format} of {args.app} to {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0
