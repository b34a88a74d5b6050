"""``status`` names each member's endpoint, or says why it cannot: from the subscription when the
broker returns it (Apache Kafka), else from the workers' HTTP API by process id (Tansu)."""

from __future__ import annotations

from rich.console import Console

from streams_runtime.processor.internals.group_member import GroupMemberDescription
from streams_runtime.tools.status import (
    NO_ENDPOINT,
    NOT_LISTED,
    UNKNOWN_ENDPOINT,
    UNREAD_ENDPOINT,
    member_endpoint,
    show,
)

PROCESS = "20416f83-48fc-44cf-8a7c-8928461a5cea"


def _member(endpoint: str | None, subscription_known: bool) -> GroupMemberDescription:
    return GroupMemberDescription(
        member_id=f"app-coordination-{PROCESS}-12859b12-917f-449b-b707-a22e5712ddc9",
        client_id="",
        client_host="",
        process_id=PROCESS,
        endpoint=endpoint,
        thread_count=1 if subscription_known else 0,
        subscription_known=subscription_known,
    )


def test_should_take_the_endpoint_from_the_subscription():
    assert member_endpoint(_member("10.0.0.5:7070", True), None) == {
        "endpoint": "10.0.0.5:7070",
        "endpoint_note": "from the member's subscription",
    }


def test_should_say_no_endpoint_configured_when_the_subscription_names_none():
    listed = [{"endpoint": "10.0.0.9:7070", "process_id": "another-process"}]
    assert member_endpoint(_member(None, True), listed) == {"endpoint": None, "endpoint_note": NO_ENDPOINT}


def test_should_find_the_endpoint_by_process_id_when_the_broker_returns_no_subscription():
    listed = [
        {"endpoint": "10.0.0.9:7070", "process_id": "another-process"},
        {"endpoint": "10.0.0.5:7070", "process_id": PROCESS},
    ]
    assert member_endpoint(_member(None, False), listed) == {
        "endpoint": "10.0.0.5:7070",
        "endpoint_note": "from the workers' HTTP API",
    }
    assert member_endpoint(_member(None, False), listed[:1])["endpoint_note"] == NOT_LISTED
    unread = [listed[0], {"endpoint": "10.0.0.5:7070", "error": "not asked: ..."}]
    assert member_endpoint(_member(None, False), unread)["endpoint_note"] == UNREAD_ENDPOINT


def test_should_say_the_endpoint_is_unknown_when_neither_broker_nor_workers_tell():
    assert member_endpoint(_member(None, False), None) == {
        "endpoint": None,
        "endpoint_note": UNKNOWN_ENDPOINT,
    }


def test_the_table_shows_the_reason_where_there_is_no_endpoint():
    members = [
        {"member_id": "m-1", "process_id": "p-1", "endpoint": "10.0.0.5:7070", "endpoint_note": "x"},
        {"member_id": "m-2", "process_id": "p-2", "endpoint": None, "endpoint_note": NO_ENDPOINT},
    ]
    console = Console(width=200, record=True)
    show(
        {"application_id": "a", "group_state": "Stable", "members": members, "instances": [], "lags": []},
        console,
    )
    text = console.export_text()
    assert "10.0.0.5:7070" in text and "no endpoint configured" in text
    assert "None" not in text and "null" not in text
