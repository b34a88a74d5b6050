package io.streamsruntime.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.test.TestRecord;

/**
 * Runs one case (docs/oracle.md) through Kafka Streams' TopologyTestDriver and returns its result:
 * after each step (an input record piped, or wall-clock time advanced) every record of the wanted
 * output topics, topic by topic in the order the case lists them, tagged with the step's index.
 * A failure (of the case or of the topology) ends the case with an "error" and the records so far.
 * A case that lists "metrics" runs at the DEBUG recording level and gets, after each step, the
 * value of each listed task-level metric of each task; one with "warnings" gets, per step, the
 * details of each "Skipping record for expired window" warning (from LogCapture).
 */
final class CaseRunner {
    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;
    private final Path stateDir;
    /** Each case gets a state directory of its own: a driver that fails to start leaves its stores open. */
    private long cases;

    CaseRunner(final Path stateDir) {
        this.stateDir = stateDir;
    }

    ObjectNode run(final JsonNode testCase) {
        final ObjectNode result = JSON.objectNode();
        if (testCase.has("id")) {
            result.set("id", testCase.get("id"));
        }
        final ArrayNode records = result.putArray("records");
        result.putNull("error");
        final JsonNode metricNames = testCase.get("metrics");
        final ArrayNode metrics = metricNames == null ? null : result.putArray("metrics");
        final ArrayNode warnings = testCase.path("warnings").asBoolean(false) ? result.putArray("warnings") : null;
        LogCapture.drain();
        try (TopologyTestDriver driver = new TopologyTestDriver(
                TopologyFromCase.build(testCase.get("topology")), config(testCase), Instant.ofEpochMilli(0))) {
            final Map<String, TestInputTopic<Object, Object>> inputs = new HashMap<>();
            for (final JsonNode pipeline : testCase.get("topology").get("pipelines")) {
                final JsonNode source = pipeline.get("source");
                if (!source.has("topic")) {
                    continue; // starts from an earlier pipeline
                }
                inputs.put(source.get("topic").asText(), driver.createInputTopic(
                    source.get("topic").asText(),
                    Catalogue.serde(source.get("key").asText()).serializer(),
                    Catalogue.serde(source.get("value").asText()).serializer()));
            }
            final Map<String, TestOutputTopic<Object, Object>> outputs = new java.util.LinkedHashMap<>();
            for (final JsonNode output : testCase.get("outputs")) {
                outputs.put(output.get("topic").asText(), driver.createOutputTopic(
                    output.get("topic").asText(),
                    Catalogue.serde(output.get("key").asText()).deserializer(),
                    Catalogue.serde(output.get("value").asText()).deserializer()));
            }
            int step = 0;
            for (final JsonNode input : testCase.get("inputs")) {
                try {
                    if (input.has("advance_wall_clock_ms")) {
                        driver.advanceWallClockTime(Duration.ofMillis(input.get("advance_wall_clock_ms").asLong()));
                    } else {
                        final String topic = input.get("topic").asText();
                        final TestInputTopic<Object, Object> in = inputs.get(topic);
                        if (in == null) {
                            throw new IllegalArgumentException("no source reads " + topic);
                        }
                        in.pipeInput(value(input.get("key")), value(input.get("value")), input.get("timestamp").asLong());
                    }
                } finally {
                    collect(outputs, step, records);
                    if (metrics != null) {
                        collectMetrics(driver, metricNames, step, metrics);
                    }
                    collectWarnings(step, warnings);
                }
                step++;
            }
        } catch (RuntimeException e) {
            result.put("error", describe(e));
        }
        return result;
    }

    private Properties config(final JsonNode testCase) {
        final Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "oracle");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "oracle:9092");
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.resolve(Long.toString(cases++)).toString());
        if (testCase.has("metrics")) {
            props.put(StreamsConfig.METRICS_RECORDING_LEVEL_CONFIG, "DEBUG");
        }
        final JsonNode config = testCase.get("config");
        if (config != null) {
            for (Iterator<Map.Entry<String, JsonNode>> it = config.fields(); it.hasNext(); ) {
                final Map.Entry<String, JsonNode> entry = it.next();
                props.put(entry.getKey(), entry.getValue().asText());
            }
        }
        return props;
    }

    private static Object value(final JsonNode node) {
        if (node == null || node.isNull()) {
            return null;
        }
        return node.isIntegralNumber() ? (Object) node.asLong() : node.asText();
    }

    private static JsonNode json(final Object value) {
        if (value == null) {
            return JSON.nullNode();
        }
        return value instanceof Long ? JSON.numberNode((Long) value) : JSON.textNode(value.toString());
    }

    private static void collect(final Map<String, TestOutputTopic<Object, Object>> outputs, final int step, final ArrayNode records) {
        for (final Map.Entry<String, TestOutputTopic<Object, Object>> entry : outputs.entrySet()) {
            for (final TestRecord<Object, Object> record : entry.getValue().readRecordsToList()) {
                final ObjectNode out = records.addObject();
                out.put("step", step);
                out.put("topic", entry.getKey());
                out.set("key", json(record.key()));
                out.set("value", json(record.value()));
                out.put("timestamp", record.timestamp());
            }
        }
    }

    /** The listed task-level metrics ("stream-task-metrics") of every task, by task id then name. */
    private static void collectMetrics(final TopologyTestDriver driver, final JsonNode names, final int step, final ArrayNode out) {
        final java.util.Set<String> wanted = new java.util.HashSet<>();
        names.forEach(name -> wanted.add(name.asText()));
        final Map<String, Object> values = new TreeMap<>();
        for (final Map.Entry<MetricName, ? extends Metric> entry : driver.metrics().entrySet()) {
            final MetricName name = entry.getKey();
            if (name.group().equals("stream-task-metrics") && wanted.contains(name.name())) {
                values.put(name.tags().get("task-id") + " " + name.name(), entry.getValue().metricValue());
            }
        }
        for (final Map.Entry<String, Object> entry : values.entrySet()) {
            final String[] taskAndName = entry.getKey().split(" ");
            final ObjectNode metric = out.addObject();
            metric.put("step", step);
            metric.put("task", taskAndName[0]);
            metric.put("name", taskAndName[1]);
            final Object value = entry.getValue();
            if (value instanceof Number && Double.isFinite(((Number) value).doubleValue())) {
                metric.put("value", ((Number) value).doubleValue());
            } else {
                metric.putNull("value"); // no record measured yet: NaN
            }
        }
    }

    /** What each "Skipping record for expired window" warning says from its timestamp on. */
    private static void collectWarnings(final int step, final ArrayNode out) {
        for (final String message : LogCapture.drain()) {
            if (System.getenv("ORACLE_DEBUG_WARNINGS") != null) {
                System.err.println("step " + step + ": " + message);
            }
            final int at = message.indexOf("timestamp=[");
            if (out != null && message.startsWith("Skipping record for expired window") && at >= 0) {
                final ObjectNode warning = out.addObject();
                warning.put("step", step);
                warning.put("window", message.substring(at));
            }
        }
    }

    private static String describe(final Throwable error) {
        final StringBuilder text = new StringBuilder();
        for (Throwable t = error; t != null; t = t.getCause()) {
            if (text.length() > 0) {
                text.append(" <- ");
            }
            text.append(t.getClass().getSimpleName()).append(": ").append(t.getMessage());
        }
        return text.toString();
    }
}
