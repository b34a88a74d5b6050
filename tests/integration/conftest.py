"""Every test under tests/integration/ talks to a real broker and carries the ``kafka`` marker."""

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if "/integration/" in str(item.fspath):
            item.add_marker(pytest.mark.kafka)
