"""Replays Kafka Streams' KTableKTableForeignKeyJoinScenarioTest and the foreign-key describe() test
of KStreamImplTest (shouldSupportForeignKeyTableTableJoinWithKTableFromKStream): default and
explicit serdes through an FK join and an equi-join on its result, the internal topics and the
subscription store Kafka names for the topology, and describe() text identical to Kafka's.
"""

from streams_runtime import Consumed, Materialized, Produced, Serdes, StreamsBuilder, TopologyTestDriver

LEFT, RIGHT, OUTPUT = "left_table", "right_table", "output-topic"


def _extract(value):
    return value.split("|")[1]


def _validate_can_process(builder, make_config):
    config = make_config(Serdes.Integer(), Serdes.String())
    with TopologyTestDriver(builder.build(), config) as driver:
        a = driver.create_input_topic("A", Serdes.Integer(), Serdes.String())
        b = driver.create_input_topic("B", Serdes.Integer(), Serdes.String())
        out = driver.create_output_topic("output", Serdes.Integer(), Serdes.String())
        a.pipe_input(1, "999-alpha")
        b.pipe_input(999, "beta")
        assert out.read_key_values_to_map() == {1: "(999-alpha,(999-alpha,beta))"}


def _scenario(builder, a_consumed=None, fk_mat=None, final_mat=None, produced=None):
    a = builder.table("A", a_consumed) if a_consumed else builder.table("A")
    b = builder.table("B")
    fk = a.join(
        b, lambda v: int(v.split("-")[0]), lambda x, y: f"({x},{y})", fk_mat or Materialized.as_("asdf")
    )
    joiner = lambda x, y: f"({x},{y})"  # noqa: E731
    final = a.join(fk, joiner, final_mat) if final_mat else a.join(fk, joiner)
    if produced:
        final.to_stream().to("output", produced)
    else:
        final.to_stream().to("output")


def test_should_work_with_default_serdes(make_config):
    """Mirrors KTableKTableForeignKeyJoinScenarioTest.shouldWorkWithDefaultSerdes."""
    builder = StreamsBuilder()
    _scenario(builder)
    _validate_can_process(builder, make_config)


def test_should_work_with_default_and_consumed_serdes(make_config):
    """Mirrors KTableKTableForeignKeyJoinScenarioTest.shouldWorkWithDefaultAndConsumedSerdes."""
    builder = StreamsBuilder()
    _scenario(builder, a_consumed=Consumed.with_(Serdes.Integer(), Serdes.String()))
    _validate_can_process(builder, make_config)


def test_should_work_with_default_and_join_result_serdes(make_config):
    """Mirrors KTableKTableForeignKeyJoinScenarioTest.shouldWorkWithDefaultAndJoinResultSerdes."""
    builder = StreamsBuilder()
    mat = Materialized.as_("asdf").with_key_serde(Serdes.Integer()).with_value_serde(Serdes.String())
    _scenario(builder, fk_mat=mat)
    _validate_can_process(builder, make_config)


def test_should_work_with_default_and_equi_join_result_serdes(make_config):
    """Mirrors KTableKTableForeignKeyJoinScenarioTest.shouldWorkWithDefaultAndEquiJoinResultSerdes."""
    builder = StreamsBuilder()
    _scenario(builder, final_mat=Materialized.with_(Serdes.Integer(), Serdes.String()))
    _validate_can_process(builder, make_config)


def test_should_work_with_default_and_produced_serdes(make_config):
    """Mirrors KTableKTableForeignKeyJoinScenarioTest.shouldWorkWithDefaultAndProducedSerdes."""
    builder = StreamsBuilder()
    _scenario(builder, produced=Produced.with_(Serdes.Integer(), Serdes.String()))
    _validate_can_process(builder, make_config)


def test_should_use_expected_topics(make_config):
    """Mirrors KTableKTableForeignKeyJoinScenarioTest.shouldUseExpectedTopicsWithSerde: the internal
    topics and the subscription store changelog Kafka names for this topology."""
    builder = StreamsBuilder()
    c = Consumed.with_(Serdes.Integer(), Serdes.String())
    left = builder.table(LEFT, c)
    right = builder.table(RIGHT, c)
    left.join(
        right,
        lambda v: int(v.split("|")[1]),
        lambda a, b: f"({a},{b})",
        Materialized.with_(None, Serdes.String()),
    ).to_stream().to(OUTPUT)
    app = "ktable-ktable-joinOnForeignKey"
    with TopologyTestDriver(builder.build(), make_config(application_id=app)) as driver:
        left_in = driver.create_input_topic(LEFT, Serdes.Integer(), Serdes.String())
        right_in = driver.create_input_topic(RIGHT, Serdes.Integer(), Serdes.String())
        left_in.pipe_input(2, "lhsValue1|1")
        right_in.pipe_input(1, "rhsValue1")
        produced = driver.produced_topic_names()
    assert {
        f"{app}-KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-0000000006-topic",
        f"{app}-KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-0000000014-topic",
        f"{app}-left_table-STATE-STORE-0000000000-changelog",
        f"{app}-right_table-STATE-STORE-0000000003-changelog",
        f"{app}-KTABLE-FK-JOIN-SUBSCRIPTION-STATE-STORE-0000000010-changelog",
        OUTPUT,
    } == produced


EXPECTED_DESCRIBE = """\
Topologies:
   Sub-topology: 0
    Source: KTABLE-SOURCE-0000000016 (topics: [KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-0000000014-topic])
      --> KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-RESOLVER-PROCESSOR-0000000017
    Source: KSTREAM-SOURCE-0000000000 (topics: [input1])
      --> KSTREAM-TOTABLE-0000000001
    Processor: KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-RESOLVER-PROCESSOR-0000000017 (stores: [KSTREAM-TOTABLE-STATE-STORE-0000000002])
      --> KTABLE-FK-JOIN-OUTPUT-0000000018
      <-- KTABLE-SOURCE-0000000016
    Processor: KSTREAM-TOTABLE-0000000001 (stores: [KSTREAM-TOTABLE-STATE-STORE-0000000002])
      --> KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-0000000007
      <-- KSTREAM-SOURCE-0000000000
    Processor: KTABLE-FK-JOIN-OUTPUT-0000000018 (stores: [])
      --> KTABLE-TOSTREAM-0000000020
      <-- KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-RESOLVER-PROCESSOR-0000000017
    Processor: KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-0000000007 (stores: [])
      --> KTABLE-SINK-0000000008
      <-- KSTREAM-TOTABLE-0000000001
    Processor: KTABLE-TOSTREAM-0000000020 (stores: [])
      --> KSTREAM-SINK-0000000021
      <-- KTABLE-FK-JOIN-OUTPUT-0000000018
    Sink: KSTREAM-SINK-0000000021 (topic: output)
      <-- KTABLE-TOSTREAM-0000000020
    Sink: KTABLE-SINK-0000000008 (topic: KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-0000000006-topic)
      <-- KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-0000000007

  Sub-topology: 1
    Source: KSTREAM-SOURCE-0000000003 (topics: [input2])
      --> KSTREAM-TOTABLE-0000000004
    Source: KTABLE-SOURCE-0000000009 (topics: [KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-0000000006-topic])
      --> KTABLE-FK-JOIN-SUBSCRIPTION-PROCESSOR-0000000011
    Processor: KSTREAM-TOTABLE-0000000004 (stores: [KSTREAM-TOTABLE-STATE-STORE-0000000005])
      --> KTABLE-FK-JOIN-SUBSCRIPTION-PROCESSOR-0000000013
      <-- KSTREAM-SOURCE-0000000003
    Processor: KTABLE-FK-JOIN-SUBSCRIPTION-PROCESSOR-0000000011 (stores: [KTABLE-FK-JOIN-SUBSCRIPTION-STATE-STORE-0000000010])
      --> KTABLE-FK-JOIN-SUBSCRIPTION-PROCESSOR-0000000012
      <-- KTABLE-SOURCE-0000000009
    Processor: KTABLE-FK-JOIN-SUBSCRIPTION-PROCESSOR-0000000012 (stores: [KSTREAM-TOTABLE-STATE-STORE-0000000005])
      --> KTABLE-SINK-0000000015
      <-- KTABLE-FK-JOIN-SUBSCRIPTION-PROCESSOR-0000000011
    Processor: KTABLE-FK-JOIN-SUBSCRIPTION-PROCESSOR-0000000013 (stores: [KTABLE-FK-JOIN-SUBSCRIPTION-STATE-STORE-0000000010])
      --> KTABLE-SINK-0000000015
      <-- KSTREAM-TOTABLE-0000000004
    Sink: KTABLE-SINK-0000000015 (topic: KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-0000000014-topic)
      <-- KTABLE-FK-JOIN-SUBSCRIPTION-PROCESSOR-0000000012, KTABLE-FK-JOIN-SUBSCRIPTION-PROCESSOR-0000000013

"""  # noqa: E501


def test_should_support_foreign_key_table_table_join_with_ktable_from_kstream(make_config):
    """Mirrors KStreamImplTest.shouldSupportForeignKeyTableTableJoinWithKTableFromKStream: the describe()
    text and the join results."""
    consumed = Consumed.with_(Serdes.String(), Serdes.String())
    builder = StreamsBuilder()
    left = builder.stream("input1", consumed).to_table()
    right = builder.stream("input2", consumed).to_table()
    left.join(right, _extract, lambda a, b: f"({a},{b})").to_stream().to("output")
    topology = builder.build()
    assert str(topology.describe()) == EXPECTED_DESCRIBE
    with TopologyTestDriver(topology, make_config()) as driver:
        s = Serdes.String()
        l_in = driver.create_input_topic("input1", s, s)
        r_in = driver.create_input_topic("input2", s, s)
        out = driver.create_output_topic("output", s, s)
        r_in.pipe_input("rhs1", "rhsValue1")
        r_in.pipe_input("rhs2", "rhsValue2")
        r_in.pipe_input("rhs3", "rhsValue3")
        assert out.read_key_values_to_map() == {}
        l_in.pipe_input("lhs1", "lhsValue1|rhs1")
        l_in.pipe_input("lhs2", "lhsValue2|rhs2")
        assert out.read_key_values_to_map() == {
            "lhs1": "(lhsValue1|rhs1,rhsValue1)",
            "lhs2": "(lhsValue2|rhs2,rhsValue2)",
        }
