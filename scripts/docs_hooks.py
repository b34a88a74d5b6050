"""MkDocs hook (mkdocs.yml ``hooks:``): writes the StreamsConfig reference at build time.

``docs/reference/configuration.md`` holds the page's introduction and the marker below; the hook
replaces the marker with one section per key declared in ``streams_runtime/config.py``
(``_define(...)`` into ``_DEFINITIONS``): its name, default, allowed values and meaning. The
allowed values are the ones the key's validator names when it refuses a value, so the page says
what ``StreamsConfig`` enforces, and a key added to ``config.py`` appears without editing the docs.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import warnings
from typing import Any

MARKER = "<!-- streams-config-keys -->"


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
            f"- **Also accepted as:** `{dotted}`",
            f"- **Default:** {_default(name, spec.default)}",
            f"- **Allowed:** {_allowed(spec.validate)}",
            "",
            spec.doc or "_No description in `streams_runtime/config.py` yet._",
            "",
        ]
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
        return markdown.replace(MARKER, config_reference())
    return markdown
