"""MkDocs hook (mkdocs.yml ``hooks:``): writes two reference pages' generated parts at build time.

``docs/reference/configuration.md`` holds the page's introduction and the marker ``MARKER``; the
hook replaces the marker with one section per key declared in ``streams_runtime/config.py`` (the
``ConfigKey`` attributes of ``StreamsConfig``, registered in ``_DEFINITIONS``): its name, Python
type (the ``T`` of its ``ConfigKey[T]`` annotation, the type mypy gives ``config.<name>``),
default, allowed values and meaning. The allowed values are the ones the key's validator names
when it refuses a value, so the page says what ``StreamsConfig`` enforces, and a key added to
``config.py`` appears without editing the docs.

``docs/reference/cli.md`` holds the marker ``CLI_MARKER``; the hook replaces it with one section per
command of ``streams-runtime`` (``streams_runtime.cli.build_parser()``, subcommands included): its
usage line, what it does and every option with its default and choices, as argparse knows them.
"""

from __future__ import annotations

import argparse
import functools
import os
import re
import sys
import tempfile
import warnings
from typing import Any

MARKER = "<!-- streams-config-keys -->"
CLI_MARKER = "<!-- streams-runtime-commands -->"


class _Probe:
    """A value no validator accepts: its refusal names what is allowed."""

    def __repr__(self) -> str:
        return "<probe>"


def _allowed(validate: Any) -> str:
    """What ``validate`` accepts, in the words of the error it raises for a wrong value."""
    from streams_runtime.errors import StreamsConfigError

    # 0 first: it is refused with the most specific message by validators that refuse it
    # (replication_factor: "-1 ... or an integer >= 1"), and accepted by those of counters
    for probe in (0, _Probe()):
        try:
            validate("key", probe)
        except StreamsConfigError as error:
            found = re.search(r"allowed: (.*)$", str(error))
            if found:
                return found.group(1)
        except Exception:  # noqa: BLE001 - a validator that fails otherwise names nothing
            continue
    return (getattr(validate, "__doc__", None) or "").strip() or "any value"


def _default(name: str, value: Any) -> str:
    if name == "state_dir" and isinstance(value, str):
        # the platform's temporary directory: show it as such, not as this build machine's path
        relative = os.path.relpath(value, tempfile.gettempdir())
        return f"`<temporary directory>/{relative}`"
    return f"`{value!r}`"


def config_reference() -> str:
    """The keys of ``_DEFINITIONS`` as Markdown, in declaration order."""
    import streams_runtime  # noqa: F401 - the package's modules may declare keys of their own
    from streams_runtime.config import _DEFINITIONS

    lines = [f"{len(_DEFINITIONS)} keys.", ""]
    for name, spec in _DEFINITIONS.items():
        dotted = name.replace("_", ".")
        lines += [
            f"### `{name}` {{ #{name} }}",
            "",
            f"- **Type:** `{spec.type_name()}`",
            f"- **Also accepted as:** `{dotted}`",
            f"- **Default:** {_default(name, spec.default)}",
            f"- **Allowed:** {_allowed(spec.validate)}",
            "",
            spec.doc or "_No description in `streams_runtime/config.py` yet._",
            "",
        ]
    return "\n".join(lines)


def _md(text: str) -> str:
    """Help text as Markdown that shows it as written: ``<dir>`` is no HTML tag, ``$A_B`` no emphasis;
    text in backquotes (single or double, as in docstrings) stays inline code."""
    text = text.replace("``", "`").replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    parts = text.split("`")
    for i in range(0, len(parts), 2):  # outside inline code
        for char in "\\*_[]":
            parts[i] = parts[i].replace(char, "\\" + char)
    return "`".join(parts)


def _sentence(text: str) -> str:
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "?", "!")) else text + "."


def _actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """A parser's arguments: argparse keeps them in a private list and offers no public view."""
    return list(parser._actions)  # noqa: SLF001


def _is_commands(action: argparse.Action) -> bool:
    return action.nargs == argparse.PARSER  # the action add_subparsers() made


def cli_commands(
    parser: argparse.ArgumentParser | None = None,
) -> list[tuple[str, argparse.ArgumentParser, str]]:
    """Every command of the ``streams-runtime`` parser as ``(path, parser, help)``, depth first.

    ``path`` is the command line that reaches it (``streams-runtime topics create``); a command with
    subcommands (``broker``, ``topics``) is listed before them.
    """
    if parser is None:
        from streams_runtime.cli import build_parser

        parser = build_parser()
    found: list[tuple[str, argparse.ArgumentParser, str]] = []

    def walk(path: str, node: argparse.ArgumentParser, help_text: str) -> None:
        found.append((path, node, help_text))
        for action in filter(_is_commands, _actions(node)):
            # each subcommand's help= is kept on a pseudo-action, again private
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}  # type: ignore[attr-defined]  # noqa: SLF001
            for name, child in action.choices.items():  # type: ignore[union-attr]
                walk(f"{path} {name}", child, helps.get(name, ""))

    walk(parser.prog, parser, parser.description or "")
    return found


def _option_line(action: argparse.Action) -> str:
    if action.option_strings:
        flags = ", ".join(action.option_strings)
        if action.nargs != 0:
            flags += f" {action.metavar or action.dest.upper()}"
    else:
        flags = str(action.metavar or action.dest)
        if action.nargs in ("+", "*"):
            flags += " ..."
    facts = []
    if action.required and action.option_strings:
        facts.append("required")
    if action.choices is not None:
        facts.append("one of " + ", ".join(f"`{choice}`" for choice in action.choices))
    has_default = action.default not in (None, argparse.SUPPRESS, [])
    if action.option_strings and action.nargs != 0 and has_default and "default" not in (action.help or ""):
        facts.append(f"default `{action.default}`")
    line = f"- `{flags}`: {_md(action.help or '')}"
    return line + (f" ({'; '.join(facts)})" if facts else "")


def _usage(parser: argparse.ArgumentParser) -> str:
    # a fixed width: the page must not depend on the terminal the site is built in
    parser.formatter_class = functools.partial(argparse.HelpFormatter, width=100)
    usage = parser.format_usage().strip().removeprefix("usage: ")
    return "\n".join(line.removeprefix(" " * len("usage: ")) for line in usage.splitlines())


def cli_reference() -> str:
    """The ``streams-runtime`` commands as Markdown, in the parser's order."""
    lines: list[str] = []
    for path, parser, help_text in cli_commands():
        anchor = path.replace(" ", "-")
        lines += [f"### `{path}` {{ #{anchor} }}", ""]
        if help_text and " " in path:  # the command itself is the page's subject
            lines += [_md(_sentence(help_text)), ""]
        lines += ["```text", _usage(parser), "```", ""]
        actions = _actions(parser)
        commands = [a for a in actions if _is_commands(a)]
        options = [a for a in actions if not _is_commands(a) and "--help" not in a.option_strings]
        lines += [_option_line(a) for a in options] or ([] if commands else ["No options."])
        for action in commands:
            links = ", ".join(f"[`{name}`](#{anchor}-{name})" for name in action.choices or ())
            lines.append(f"- Commands: {links}")
        lines.append("")
    return "\n".join(lines)


def on_config(config: Any) -> Any:
    # kafka-python loads its protocol schemas through deprecated importlib.resources calls (the
    # same filters as pytest's in pyproject.toml); mkdocs would log each as it imports the package
    warnings.filterwarnings("ignore", category=DeprecationWarning, module="kafka.protocol.schemas.load_json")
    warnings.filterwarnings("ignore", message="(read|open)_text is deprecated", category=DeprecationWarning)
    # document this checkout's package, not another copy installed in the environment
    root = os.path.dirname(os.path.abspath(config.config_file_path))
    if root not in sys.path:
        sys.path.insert(0, root)
    return config


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if MARKER in markdown:
        markdown = markdown.replace(MARKER, config_reference())
    if CLI_MARKER in markdown:
        markdown = markdown.replace(CLI_MARKER, cli_reference())
    return markdown
