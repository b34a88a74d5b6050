"""The README's topology example runs as written and prints what the README says."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_wordcount_example_runs_and_counts_words() -> None:
    text = README.read_text()
    code = re.search(r"```python\n(import re.*?)```", text, re.S).group(1)
    code = code.replace(
        "    counts.read_key_values_to_list()", "    result = counts.read_key_values_to_list()"
    )
    code = code.replace(
        '    driver.get_key_value_store("word-count-store").get("hello")',
        '    hello = driver.get_key_value_store("word-count-store").get("hello")',
    )
    scope: dict = {}
    with contextlib.redirect_stdout(io.StringIO()) as out:
        exec(compile(code, str(README), "exec"), scope)
    assert [(kv.key, kv.value) for kv in scope["result"]] == [
        ("hello", 1),
        ("kafka", 1),
        ("streams", 1),
        ("hello", 2),
        ("python", 1),
    ]
    assert scope["hello"] == 2
    printed = out.getvalue()
    assert "Sub-topology: 1" in printed
    assert "wordcount-app-word-count-store-repartition" in printed
    assert "{0: 6, 1: 6}" in printed
