package io.streamsruntime.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.WindowStore;

/**
 * The benchmark's workloads with Kafka Streams' DSL; bench/peer_workloads.py builds the same ones
 * with this project's DSL (the docstrings there say what each computes).
 */
final class Workloads {
  private static final ObjectMapper JSON = new ObjectMapper();
  static final Serde<JsonNode> JSON_SERDE = Serdes.serdeFrom(jsonSerializer(), jsonDeserializer());

  private Workloads() {}

  static Topology build(JsonNode spec) {
    String workload = spec.get("workload").asText();
    String input = spec.get("input").asText();
    String output = spec.get("output").asText();
    StreamsBuilder builder = new StreamsBuilder();
    switch (workload) {
      case "W1":
        builder.stream(input, Consumed.with(Serdes.Bytes(), JSON_SERDE))
            .filter((key, value) -> value.get("amount").asLong() % 2 == 0)
            .mapValues(Workloads::enrich)
            .to(output, Produced.with(Serdes.Bytes(), JSON_SERDE));
        break;
      case "W2":
        builder.stream(input, Consumed.with(Serdes.String(), JSON_SERDE))
            .groupByKey(Grouped.with(Serdes.String(), JSON_SERDE))
            .count(
                Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("bench-counts")
                    .withKeySerde(Serdes.String())
                    .withValueSerde(Serdes.Long())
                    .withCachingDisabled())
            .toStream()
            .mapValues((key, count) -> countUpdate(key, count))
            .to(output, Produced.with(Serdes.String(), JSON_SERDE));
        break;
      case "W3":
        KTable<String, JsonNode> items =
            builder.table(spec.get("items").asText(), Consumed.with(Serdes.String(), JSON_SERDE));
        builder.stream(input, Consumed.with(Serdes.String(), JSON_SERDE))
            .selectKey((user, payment) -> payment.get("item").asText())
            .join(items, Workloads::joinItem, org.apache.kafka.streams.kstream.Joined.with(
                Serdes.String(), JSON_SERDE, JSON_SERDE))
            .groupByKey(Grouped.with(Serdes.String(), JSON_SERDE))
            .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofMinutes(1), Duration.ofSeconds(10)))
            .aggregate(
                () -> 0L,
                (item, sale, total) -> total + sale.get("amount").asLong(),
                Materialized.<String, Long, WindowStore<Bytes, byte[]>>as("bench-sales")
                    .withKeySerde(Serdes.String())
                    .withValueSerde(Serdes.Long()))
            .toStream()
            .map((window, total) -> KeyValue.pair(
                window.key() + "@" + window.window().start(), totalUpdate(total)))
            .to(output, Produced.with(Serdes.String(), JSON_SERDE));
        break;
      default:
        throw new IllegalArgumentException("workload must be W1, W2 or W3, not " + workload);
    }
    return builder.build();
  }

  static JsonNode enrich(JsonNode value) {
    ((ObjectNode) value).put("amount_cents", value.get("amount").asLong() * 100);
    return value;
  }

  static JsonNode countUpdate(String key, long count) {
    ObjectNode out = JSON.createObjectNode();
    out.put("key", key);
    out.put("count", count);
    return out;
  }

  static JsonNode joinItem(JsonNode payment, JsonNode item) {
    ObjectNode out = JSON.createObjectNode();
    out.put("user", payment.get("user").asText());
    out.put("amount", payment.get("amount").asLong());
    out.put("category", item.get("category").asText());
    return out;
  }

  static JsonNode totalUpdate(long total) {
    ObjectNode out = JSON.createObjectNode();
    out.put("total", total);
    return out;
  }

  private static Serializer<JsonNode> jsonSerializer() {
    return (topic, node) -> {
      try {
        return node == null ? null : JSON.writeValueAsBytes(node);
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    };
  }

  private static Deserializer<JsonNode> jsonDeserializer() {
    return (topic, bytes) -> {
      try {
        return bytes == null ? null : JSON.readTree(bytes);
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    };
  }
}
