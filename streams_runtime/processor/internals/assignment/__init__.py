"""Task assignment: which member runs which task, as active, standby or warm-up.

Pure logic (no client library). The leader's entry point is :class:`StreamsAssignor`; members
exchange :class:`SubscriptionInfo` and :class:`AssignmentInfo` as group-protocol user data
(see ``streams_runtime.processor.internals.group_member``). ``TaskId`` is the project's one task id type
(:mod:`streams_runtime.processor.task_id`), re-exported here for convenience.
"""

from streams_runtime.errors import MissingSourceTopicError
from streams_runtime.processor.internals.assignment.assignment_info import (
    AssignmentInfo,
    AssignorError,
    RebalanceRequest,
)
from streams_runtime.processor.internals.assignment.client_state import (
    UNKNOWN_LAG,
    ClientState,
    compute_task_lags,
)
from streams_runtime.processor.internals.assignment.consumer_distribution import (
    ConsumerBin,
    MemberTasks,
    distribute_tasks,
)
from streams_runtime.processor.internals.assignment.partition_grouper import (
    CopartitioningError,
    SourcePartition,
    SubtopologySources,
    all_source_topics,
    partition_groups,
)
from streams_runtime.processor.internals.assignment.streams_assignor import GroupAssignment, StreamsAssignor
from streams_runtime.processor.internals.assignment.subscription_info import LATEST_OFFSET, SubscriptionInfo
from streams_runtime.processor.internals.assignment.task_assignor import (
    AssignorConfig,
    TaskAssignmentResult,
    TaskAssignor,
)
from streams_runtime.processor.internals.assignment.wire import AssignmentProtocolError
from streams_runtime.processor.task_id import TaskId

__all__ = [
    "LATEST_OFFSET",
    "UNKNOWN_LAG",
    "AssignmentInfo",
    "AssignmentProtocolError",
    "AssignorConfig",
    "AssignorError",
    "ClientState",
    "ConsumerBin",
    "CopartitioningError",
    "GroupAssignment",
    "MemberTasks",
    "MissingSourceTopicError",
    "RebalanceRequest",
    "SourcePartition",
    "StreamsAssignor",
    "SubscriptionInfo",
    "SubtopologySources",
    "TaskAssignmentResult",
    "TaskAssignor",
    "TaskId",
    "all_source_topics",
    "compute_task_lags",
    "distribute_tasks",
    "partition_groups",
]
