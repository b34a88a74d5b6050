package io.streamsruntime.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.KGroupedStream;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.TimeWindowedKStream;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.kstream.Windowed;

/**
 * Builds a case's topology with Kafka Streams' DSL (docs/oracle.md, "Topologies"). Each pipeline
 * starts at a source topic and applies its operations in order; the value type is tracked so every
 * operation gets explicit serdes (keys are strings throughout: windowed keys are rendered
 * "key@start/end" by to_stream). Raw types: a case's types are known only at run time.
 */
@SuppressWarnings({"unchecked", "rawtypes"})
final class TopologyFromCase {
    private static final Serde<Object> KEY = Catalogue.serde("string");

    private TopologyFromCase() {}

    static Topology build(final JsonNode topology) {
        final StreamsBuilder builder = new StreamsBuilder();
        for (final JsonNode pipeline : topology.get("pipelines")) {
            addPipeline(builder, pipeline);
        }
        return builder.build();
    }

    private static void addPipeline(final StreamsBuilder builder, final JsonNode pipeline) {
        final JsonNode source = pipeline.get("source");
        String valueType = source.get("value").asText();
        if (!source.get("key").asText().equals("string")) {
            throw new IllegalArgumentException("keys are strings");
        }
        Object current = builder.stream(source.get("topic").asText(), Consumed.with(KEY, Catalogue.serde(valueType)));
        String kind = "stream";
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
                    current = ((KGroupedStream) current).windowedBy(timeWindows(op.get("window")));
                    kind = "windowed";
                    break;
                case "grouped.count":
                    current = ((KGroupedStream) current).count(Materialized.with(KEY, Catalogue.serde("long")));
                    valueType = "long";
                    kind = "table";
                    break;
                case "grouped.reduce":
                    current = ((KGroupedStream) current).reduce(
                        Catalogue.reducer(fn), Materialized.with(KEY, Catalogue.serde(valueType)));
                    kind = "table";
                    break;
                case "grouped.aggregate":
                    valueType = Catalogue.aggregateType(fn);
                    current = ((KGroupedStream) current).aggregate(
                        Catalogue.initializer(fn), Catalogue.aggregator(fn),
                        Materialized.with(KEY, Catalogue.serde(valueType)));
                    kind = "table";
                    break;
                case "windowed.count":
                    current = ((TimeWindowedKStream) current).count(Materialized.with(KEY, Catalogue.serde("long")));
                    valueType = "long";
                    kind = "windowed_table";
                    break;
                case "windowed.reduce":
                    current = ((TimeWindowedKStream) current).reduce(
                        Catalogue.reducer(fn), Materialized.with(KEY, Catalogue.serde(valueType)));
                    kind = "windowed_table";
                    break;
                case "windowed.aggregate":
                    valueType = Catalogue.aggregateType(fn);
                    current = ((TimeWindowedKStream) current).aggregate(
                        Catalogue.initializer(fn), Catalogue.aggregator(fn),
                        Materialized.with(KEY, Catalogue.serde(valueType)));
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
                case "table.to_stream":
                    current = ((KTable) current).toStream();
                    kind = "stream";
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
        if (!kind.equals("done")) {
            throw new IllegalArgumentException("a pipeline ends with to");
        }
    }

    private static TimeWindows timeWindows(final JsonNode window) {
        final String type = window.get("type").asText();
        final long size = window.get("size").asLong();
        TimeWindows windows = TimeWindows.ofSizeAndGrace(Duration.ofMillis(size), Duration.ofMillis(window.get("grace").asLong()));
        switch (type) {
            case "tumbling":
                return windows;
            case "hopping":
                return windows.advanceBy(Duration.ofMillis(window.get("advance").asLong()));
            default:
                throw new IllegalArgumentException("unknown window type " + type);
        }
    }
}
