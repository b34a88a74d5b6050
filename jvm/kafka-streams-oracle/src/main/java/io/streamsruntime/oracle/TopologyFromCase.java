package io.streamsruntime.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.BiFunction;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.BranchedKStream;
import org.apache.kafka.streams.kstream.Branched;
import org.apache.kafka.streams.kstream.CogroupedKStream;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.EmitStrategy;
import org.apache.kafka.streams.kstream.GlobalKTable;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.JoinWindows;
import org.apache.kafka.streams.kstream.Joined;
import org.apache.kafka.streams.kstream.KGroupedStream;
import org.apache.kafka.streams.kstream.KGroupedTable;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.KeyValueMapper;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.Repartitioned;
import org.apache.kafka.streams.kstream.SessionWindowedCogroupedKStream;
import org.apache.kafka.streams.kstream.SessionWindowedKStream;
import org.apache.kafka.streams.kstream.SessionWindows;
import org.apache.kafka.streams.kstream.SlidingWindows;
import org.apache.kafka.streams.kstream.StreamJoined;
import org.apache.kafka.streams.kstream.Suppressed;
import org.apache.kafka.streams.kstream.TimeWindowedCogroupedKStream;
import org.apache.kafka.streams.kstream.TimeWindowedKStream;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.kstream.ValueJoiner;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.state.Stores;

/**
 * Builds a case's topology with Kafka Streams' DSL (docs/oracle.md, "Operations"). Each pipeline
 * starts at a source topic (a stream or a table) or at what an earlier, named pipeline left, and
 * applies its operations in order; the value type is tracked so every operation gets explicit
 * serdes (keys are strings throughout: windowed keys are rendered "key@start/end" by to_stream).
 * Raw types: a case's types are known only at run time.
 */
@SuppressWarnings({"unchecked", "rawtypes"})
final class TopologyFromCase {
    private static final Serde<Object> KEY = Catalogue.serde("string");

    /** What a chain holds: the DSL object, its kind (stream, table, grouped, ...) and value type. */
    private static final class Chain {
        final Object current;
        final String kind;
        final String valueType;

        Chain(final Object current, final String kind, final String valueType) {
            this.current = current;
            this.kind = kind;
            this.valueType = valueType;
        }
    }

    private TopologyFromCase() {}

    static Topology build(final JsonNode topology) {
        final StreamsBuilder builder = new StreamsBuilder();
        final Map<String, Chain> named = new HashMap<>();
        for (final JsonNode pipeline : topology.get("pipelines")) {
            addPipeline(builder, pipeline, named);
        }
        return builder.build();
    }

    private static Chain source(final StreamsBuilder builder, final JsonNode source, final Map<String, Chain> named) {
        if (source.has("pipeline")) {
            final Chain chain = named.get(source.get("pipeline").asText());
            if (chain == null) {
                throw new IllegalArgumentException("no earlier pipeline is named " + source.get("pipeline").asText());
            }
            return chain;
        }
        final String valueType = source.get("value").asText();
        if (!source.get("key").asText().equals("string")) {
            throw new IllegalArgumentException("keys are strings");
        }
        final String topic = source.get("topic").asText();
        final Consumed consumed = Consumed.with(KEY, Catalogue.serde(valueType));
        final String kind = source.has("kind") ? source.get("kind").asText() : "stream";
        switch (kind) {
            case "stream":
                return new Chain(builder.stream(topic, consumed), "stream", valueType);
            case "table":
                if (source.has("versioned")) {
                    final long history = source.get("versioned").get("history_retention").asLong();
                    final Materialized versioned = Materialized.as(
                        Stores.persistentVersionedKeyValueStore(topic + "-versioned", Duration.ofMillis(history)))
                        .withKeySerde(KEY).withValueSerde(Catalogue.serde(valueType));
                    return new Chain(builder.table(topic, consumed, versioned), "table", valueType);
                }
                return new Chain(builder.table(topic, consumed), "table", valueType);
            case "global_table":
                return new Chain(builder.globalTable(topic, consumed), "global_table", valueType);
            default:
                throw new IllegalArgumentException("unknown source kind " + kind);
        }
    }

    private static Chain other(final JsonNode op, final Map<String, Chain> named) {
        final Chain chain = named.get(op.get("other").asText());
        if (chain == null) {
            throw new IllegalArgumentException("no earlier pipeline is named " + op.get("other").asText());
        }
        return chain;
    }

    private static void addPipeline(final StreamsBuilder builder, final JsonNode pipeline, final Map<String, Chain> named) {
        final Chain start = source(builder, pipeline.get("source"), named);
        Object current = start.current;
        String kind = start.kind;
        String valueType = start.valueType;
        for (final JsonNode op : pipeline.get("ops")) {
            final String name = op.get("op").asText();
            final String fn = op.has("fn") ? op.get("fn").asText() : null;
            switch (kind + "." + name) {
                case "stream.filter":
                    current = ((KStream) current).filter(Catalogue.predicate(fn));
                    break;
                case "stream.filter_not":
                    current = ((KStream) current).filterNot(Catalogue.predicate(fn));
                    break;
                case "stream.map_values":
                    current = ((KStream) current).mapValues(Catalogue.valueMapper(fn));
                    valueType = op.get("to").asText();
                    break;
                case "stream.map":
                    current = ((KStream) current).map(Catalogue.keyValueMapper(fn));
                    break;
                case "stream.select_key":
                    current = ((KStream) current).selectKey(Catalogue.keySelector(fn));
                    break;
                case "stream.flat_map_values":
                    current = ((KStream) current).flatMapValues(Catalogue.flatValueMapper(fn));
                    break;
                case "stream.repartition":
                    current = ((KStream) current).repartition(Repartitioned.with(KEY, Catalogue.serde(valueType)));
                    break;
                case "stream.merge": {
                    final Chain other = other(op, named);
                    if (!other.kind.equals("stream") || !other.valueType.equals(valueType)) {
                        throw new IllegalArgumentException("merge takes a stream of the same value type");
                    }
                    current = ((KStream) current).merge((KStream) other.current);
                    break;
                }
                case "stream.join":
                case "stream.left_join":
                case "stream.outer_join":
                    current = join((KStream) current, valueType, name, op, other(op, named));
                    valueType = Catalogue.joinerType(fn);
                    break;
                case "stream.split": {
                    BranchedKStream split = ((KStream) current).split();
                    final String splitType = valueType;
                    for (final JsonNode branch : op.get("branches")) {
                        final String branchName = branch.get("name").asText();
                        split = split.branch(Catalogue.predicate(branch.get("fn").asText()), Branched.withConsumer(
                            ks -> named.put(branchName, new Chain(ks, "stream", splitType)), branchName));
                    }
                    final JsonNode defaultBranch = op.get("default");
                    if (defaultBranch == null || defaultBranch.isNull()) {
                        split.noDefaultBranch();
                    } else {
                        final String branchName = defaultBranch.asText();
                        split.defaultBranch(Branched.withConsumer(
                            ks -> named.put(branchName, new Chain(ks, "stream", splitType)), branchName));
                    }
                    kind = "done";
                    break;
                }
                case "stream.to_table":
                    current = ((KStream) current).toTable(store(op, valueType));
                    kind = "table";
                    break;
                case "stream.group_by_key":
                    current = ((KStream) current).groupByKey(Grouped.with(KEY, Catalogue.serde(valueType)));
                    kind = "grouped";
                    break;
                case "stream.group_by":
                    current = ((KStream) current).groupBy(
                        Catalogue.keySelector(fn), Grouped.with(KEY, Catalogue.serde(valueType)));
                    kind = "grouped";
                    break;
                case "stream.to":
                    ((KStream) current).to(op.get("topic").asText(), Produced.with(KEY, Catalogue.serde(valueType)));
                    kind = "done";
                    break;
                case "grouped.windowed_by":
                    current = windowedBy((KGroupedStream) current, op.get("window"));
                    kind = "windowed";
                    break;
                case "grouped.count":
                    current = ((KGroupedStream) current).count(store(op, "long"));
                    valueType = "long";
                    kind = "table";
                    break;
                case "grouped.reduce":
                    current = ((KGroupedStream) current).reduce(Catalogue.reducer(fn), store(op, valueType));
                    kind = "table";
                    break;
                case "grouped.aggregate":
                    valueType = Catalogue.aggregateType(fn);
                    current = ((KGroupedStream) current).aggregate(
                        Catalogue.initializer(fn), Catalogue.aggregator(fn), store(op, valueType));
                    kind = "table";
                    break;
                case "windowed.emit_on_window_close":
                    if (current instanceof SessionWindowedKStream) {
                        current = ((SessionWindowedKStream) current).emitStrategy(EmitStrategy.onWindowClose());
                    } else {
                        current = ((TimeWindowedKStream) current).emitStrategy(EmitStrategy.onWindowClose());
                    }
                    break;
                case "windowed.count":
                    if (current instanceof SessionWindowedKStream) {
                        current = ((SessionWindowedKStream) current).count(windowStore(op, "long"));
                    } else {
                        current = ((TimeWindowedKStream) current).count(windowStore(op, "long"));
                    }
                    valueType = "long";
                    kind = "windowed_table";
                    break;
                case "windowed.reduce":
                    if (current instanceof SessionWindowedKStream) {
                        current = ((SessionWindowedKStream) current).reduce(Catalogue.reducer(fn), windowStore(op, valueType));
                    } else {
                        current = ((TimeWindowedKStream) current).reduce(Catalogue.reducer(fn), windowStore(op, valueType));
                    }
                    kind = "windowed_table";
                    break;
                case "windowed.aggregate":
                    valueType = Catalogue.aggregateType(fn);
                    if (current instanceof SessionWindowedKStream) {
                        current = ((SessionWindowedKStream) current).aggregate(
                            Catalogue.initializer(fn), Catalogue.aggregator(fn), Catalogue.merger(fn),
                            windowStore(op, valueType));
                    } else {
                        current = ((TimeWindowedKStream) current).aggregate(
                            Catalogue.initializer(fn), Catalogue.aggregator(fn), windowStore(op, valueType));
                    }
                    kind = "windowed_table";
                    break;
                case "table.filter":
                    current = ((KTable) current).filter(Catalogue.predicate(fn));
                    break;
                case "table.filter_not":
                    current = ((KTable) current).filterNot(Catalogue.predicate(fn));
                    break;
                case "table.map_values":
                    current = ((KTable) current).mapValues(Catalogue.valueMapper(fn));
                    valueType = op.get("to").asText();
                    break;
                case "table.group_by":
                    current = ((KTable) current).groupBy(
                        Catalogue.keyValueMapper(fn), Grouped.with(KEY, Catalogue.serde(valueType)));
                    kind = "grouped_table";
                    break;
                case "table.join":
                case "table.left_join":
                case "table.outer_join":
                    current = tableJoin((KTable) current, name, op, other(op, named));
                    valueType = Catalogue.joinerType(fn);
                    break;
                case "table.suppress":
                case "windowed_table.suppress":
                    current = ((KTable) current).suppress(suppressed(op));
                    break;
                case "grouped.cogroup": {
                    CogroupedKStream cogrouped = ((KGroupedStream) current).cogroup(Catalogue.aggregator(fn));
                    valueType = Catalogue.aggregateType(fn);
                    for (final JsonNode more : op.get("others")) {
                        final Chain other = other(more, named);
                        final String aggregator = more.get("fn").asText();
                        if (!other.kind.equals("grouped") || !Catalogue.aggregateType(aggregator).equals(valueType)) {
                            throw new IllegalArgumentException("cogroup takes grouped streams aggregated to one type");
                        }
                        cogrouped = cogrouped.cogroup((KGroupedStream) other.current, Catalogue.aggregator(aggregator));
                    }
                    current = cogrouped;
                    kind = "cogrouped";
                    break;
                }
                case "cogrouped.windowed_by":
                    current = cogroupWindowedBy((CogroupedKStream) current, op.get("window"));
                    kind = "windowed_cogrouped";
                    break;
                case "cogrouped.aggregate":
                    current = ((CogroupedKStream) current).aggregate(Catalogue.initializer(fn), store(op, valueType));
                    kind = "table";
                    break;
                case "windowed_cogrouped.aggregate":
                    if (current instanceof SessionWindowedCogroupedKStream) {
                        current = ((SessionWindowedCogroupedKStream) current).aggregate(
                            Catalogue.initializer(fn), Catalogue.merger(fn), windowStore(op, valueType));
                    } else {
                        current = ((TimeWindowedCogroupedKStream) current).aggregate(
                            Catalogue.initializer(fn), windowStore(op, valueType));
                    }
                    kind = "windowed_table";
                    break;
                case "table.to_stream":
                    current = ((KTable) current).toStream();
                    kind = "stream";
                    break;
                case "grouped_table.count":
                    current = ((KGroupedTable) current).count(store(op, "long"));
                    valueType = "long";
                    kind = "table";
                    break;
                case "grouped_table.reduce":
                    current = ((KGroupedTable) current).reduce(
                        Catalogue.reducer(fn), Catalogue.tableSubtractor(fn), store(op, valueType));
                    kind = "table";
                    break;
                case "grouped_table.aggregate":
                    valueType = Catalogue.aggregateType(fn);
                    current = ((KGroupedTable) current).aggregate(
                        Catalogue.initializer(fn), Catalogue.aggregator(fn), Catalogue.tableAggregateSubtractor(fn),
                        store(op, valueType));
                    kind = "table";
                    break;
                case "windowed_table.to_stream":
                    current = ((KTable<Windowed<Object>, Object>) current).toStream()
                        .map((wk, v) -> KeyValue.pair(
                            wk.key() + "@" + wk.window().start() + "/" + wk.window().end(), v));
                    kind = "stream";
                    break;
                default:
                    throw new IllegalArgumentException("operation " + name + " does not apply to a " + kind);
            }
        }
        if (pipeline.has("name")) {
            if (!kind.equals("stream") && !kind.equals("table") && !kind.equals("global_table") && !kind.equals("grouped")) {
                throw new IllegalArgumentException("a named pipeline ends with a stream, a table or a grouped stream");
            }
            named.put(pipeline.get("name").asText(), new Chain(current, kind, valueType));
        } else if (!kind.equals("done")) {
            throw new IllegalArgumentException("a pipeline ends with to or split, or has a name");
        }
    }

    /** A store: explicit serdes, and the op's "store" type ("rocksdb", "in_memory") when it has one. */
    private static Materialized store(final JsonNode op, final String valueType) {
        final Materialized materialized = Materialized.with(KEY, Catalogue.serde(valueType));
        if (!op.has("store")) {
            return materialized;
        }
        switch (op.get("store").asText()) {
            case "rocksdb":
                return materialized.withStoreType(Materialized.StoreType.ROCKS_DB);
            case "in_memory":
                return materialized.withStoreType(Materialized.StoreType.IN_MEMORY);
            default:
                throw new IllegalArgumentException("unknown store type " + op.get("store").asText());
        }
    }

    /** A windowed aggregation's store: as store(), and the op's "retention" (ms) when it has one. */
    private static Materialized windowStore(final JsonNode op, final String valueType) {
        final Materialized materialized = store(op, valueType);
        return op.has("retention") ? materialized.withRetention(Duration.ofMillis(op.get("retention").asLong())) : materialized;
    }

    /** Suppressed: until the windows close (the default) or until a time limit, with a buffer config. */
    private static Suppressed suppressed(final JsonNode op) {
        final String until = op.has("until") ? op.get("until").asText() : "window_close";
        final JsonNode buffer = op.get("buffer");
        Suppressed.BufferConfig config = Suppressed.BufferConfig.unbounded();
        if (buffer != null && !buffer.isNull()) {
            config = buffer.has("max_records")
                ? Suppressed.BufferConfig.maxRecords(buffer.get("max_records").asLong())
                : Suppressed.BufferConfig.maxBytes(buffer.get("max_bytes").asLong());
            if (buffer.has("max_records") && buffer.has("max_bytes")) {
                config = config.withMaxBytes(buffer.get("max_bytes").asLong());
            }
            final String whenFull = buffer.get("when_full").asText();
            switch (whenFull) {
                case "emit_early":
                    config = config.emitEarlyWhenFull();
                    break;
                case "shut_down":
                    config = config.shutDownWhenFull();
                    break;
                default:
                    throw new IllegalArgumentException("unknown buffer policy " + whenFull);
            }
        }
        switch (until) {
            case "window_close":
                if (!(config instanceof Suppressed.StrictBufferConfig)) {
                    throw new IllegalArgumentException("until window close takes a strict buffer (shut_down)");
                }
                return Suppressed.untilWindowCloses((Suppressed.StrictBufferConfig) config);
            case "time_limit":
                return Suppressed.untilTimeLimit(Duration.ofMillis(op.get("time_limit").asLong()), config);
            default:
                throw new IllegalArgumentException("unknown suppression " + until);
        }
    }

    /** A table-table join: by key with a table (inner, left, outer), or by foreign key ("extractor"). */
    private static KTable tableJoin(final KTable left, final String how, final JsonNode op, final Chain right) {
        if (!right.kind.equals("table")) {
            throw new IllegalArgumentException("a table joins a table");
        }
        final ValueJoiner joiner = Catalogue.valueJoiner(op.get("fn").asText());
        final KTable table = (KTable) right.current;
        final boolean materialized = op.has("store");
        final Materialized store = store(op, Catalogue.joinerType(op.get("fn").asText()));
        if (op.has("extractor")) {
            final BiFunction<Object, Object, Object> extractor = Catalogue.foreignKeyExtractor(op.get("extractor").asText());
            switch (how) {
                case "join":
                    return materialized ? left.join(table, extractor, joiner, store) : left.join(table, extractor, joiner);
                case "left_join":
                    return materialized ? left.leftJoin(table, extractor, joiner, store) : left.leftJoin(table, extractor, joiner);
                default:
                    throw new IllegalArgumentException(how + " is not a foreign-key join");
            }
        }
        switch (how) {
            case "join":
                return materialized ? left.join(table, joiner, store) : left.join(table, joiner);
            case "left_join":
                return materialized ? left.leftJoin(table, joiner, store) : left.leftJoin(table, joiner);
            default:
                return materialized ? left.outerJoin(table, joiner, store) : left.outerJoin(table, joiner);
        }
    }

    private static Object cogroupWindowedBy(final CogroupedKStream cogrouped, final JsonNode window) {
        final String type = window.get("type").asText();
        final Duration grace = Duration.ofMillis(window.get("grace").asLong());
        switch (type) {
            case "tumbling":
                return cogrouped.windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofMillis(window.get("size").asLong()), grace));
            case "hopping":
                return cogrouped.windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofMillis(window.get("size").asLong()), grace)
                    .advanceBy(Duration.ofMillis(window.get("advance").asLong())));
            case "session":
                return cogrouped.windowedBy(SessionWindows.ofInactivityGapAndGrace(Duration.ofMillis(window.get("gap").asLong()), grace));
            case "sliding":
                return cogrouped.windowedBy(SlidingWindows.ofTimeDifferenceAndGrace(
                    Duration.ofMillis(window.get("difference").asLong()), grace));
            default:
                throw new IllegalArgumentException("unknown window type " + type);
        }
    }

    private static KStream join(final KStream left, final String leftType, final String how, final JsonNode op, final Chain right) {
        final String joiner = op.get("fn").asText();
        if (right.kind.equals("global_table")) {
            final GlobalKTable global = (GlobalKTable) right.current;
            final KeyValueMapper selector = Catalogue.keySelector(op.get("key_selector").asText());
            switch (how) {
                case "join":
                    return left.join(global, selector, Catalogue.valueJoiner(joiner));
                case "left_join":
                    return left.leftJoin(global, selector, Catalogue.valueJoiner(joiner));
                default:
                    throw new IllegalArgumentException(how + " does not join a stream with a global table");
            }
        }
        if (right.kind.equals("table")) {
            Joined joined = Joined.with(KEY, Catalogue.serde(leftType), Catalogue.serde(right.valueType));
            if (op.has("grace")) {
                joined = joined.withGracePeriod(Duration.ofMillis(op.get("grace").asLong()));
            }
            final KTable table = (KTable) right.current;
            switch (how) {
                case "join":
                    return left.join(table, Catalogue.valueJoiner(joiner), joined);
                case "left_join":
                    return left.leftJoin(table, Catalogue.valueJoiner(joiner), joined);
                default:
                    throw new IllegalArgumentException(how + " does not join a stream with a table");
            }
        }
        if (!right.kind.equals("stream")) {
            throw new IllegalArgumentException("a stream joins a stream or a table");
        }
        final JsonNode window = op.get("window");
        JoinWindows windows = JoinWindows.ofTimeDifferenceAndGrace(
            Duration.ofMillis(window.get("difference").asLong()), Duration.ofMillis(window.get("grace").asLong()));
        if (window.has("after")) {
            windows = windows.after(Duration.ofMillis(window.get("after").asLong()));
        }
        final StreamJoined joined = StreamJoined.with(KEY, Catalogue.serde(leftType), Catalogue.serde(right.valueType));
        final KStream other = (KStream) right.current;
        switch (how) {
            case "join":
                return left.join(other, Catalogue.valueJoiner(joiner), windows, joined);
            case "left_join":
                return left.leftJoin(other, Catalogue.valueJoiner(joiner), windows, joined);
            default:
                return left.outerJoin(other, Catalogue.valueJoiner(joiner), windows, joined);
        }
    }

    private static Object windowedBy(final KGroupedStream grouped, final JsonNode window) {
        final String type = window.get("type").asText();
        final Duration grace = Duration.ofMillis(window.get("grace").asLong());
        switch (type) {
            case "tumbling":
                return grouped.windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofMillis(window.get("size").asLong()), grace));
            case "hopping":
                return grouped.windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofMillis(window.get("size").asLong()), grace)
                    .advanceBy(Duration.ofMillis(window.get("advance").asLong())));
            case "session":
                return grouped.windowedBy(SessionWindows.ofInactivityGapAndGrace(Duration.ofMillis(window.get("gap").asLong()), grace));
            case "sliding":
                return grouped.windowedBy(SlidingWindows.ofTimeDifferenceAndGrace(
                    Duration.ofMillis(window.get("difference").asLong()), grace));
            default:
                throw new IllegalArgumentException("unknown window type " + type);
        }
    }
}
