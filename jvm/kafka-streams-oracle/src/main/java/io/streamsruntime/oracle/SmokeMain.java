package io.streamsruntime.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.KGroupedStream;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.TimeWindows;

/**
 * The runtime-level smoke workload on a real broker, run by Kafka Streams (tests/oracle/smoke.py
 * builds the same topology with this project's DSL and computes the expected results itself).
 *
 * <p>{@code java -cp ... io.streamsruntime.oracle.SmokeMain '<json spec>'}: the spec names the
 * servers, the application id, the state directory, the commit interval, the input topic and the
 * prefix of the output topics. Prints {@code RUNNING} once the client runs; closes the client and
 * exits when its standard input ends.
 *
 * <p>Per key of the input (string keys, long values): min, max, sum and count, the average from a
 * table-table join of sum and count, the count per one-hour tumbling window (key {@code
 * <key>@<window start>}), and, behind a repartition, the count per {@code g<value mod 10>}.
 */
public final class SmokeMain {
  private static final ObjectMapper JSON = new ObjectMapper();

  private SmokeMain() {}

  static Topology topology(String input, String out) {
    Serde<String> s = Serdes.String();
    Serde<Long> l = Serdes.Long();
    StreamsBuilder builder = new StreamsBuilder();
    KStream<String, Long> data = builder.stream(input, Consumed.with(s, l));
    KGroupedStream<String, Long> byKey = data.groupByKey(Grouped.with(s, l));
    byKey.reduce(Math::min, Materialized.with(s, l)).toStream().to(out + "min", Produced.with(s, l));
    byKey.reduce(Math::max, Materialized.with(s, l)).toStream().to(out + "max", Produced.with(s, l));
    KTable<String, Long> sum = byKey.reduce(Long::sum, Materialized.with(s, l));
    sum.toStream().to(out + "sum", Produced.with(s, l));
    KTable<String, Long> count = byKey.count(Materialized.with(s, l));
    count.toStream().to(out + "cnt", Produced.with(s, l));
    sum.join(count, (total, n) -> (double) total / n)
        .toStream()
        .to(out + "avg", Produced.with(s, Serdes.Double()));
    byKey
        .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofHours(1), Duration.ofDays(1)))
        .count(Materialized.with(s, l))
        .toStream((windowed, n) -> windowed.key() + "@" + windowed.window().start())
        .to(out + "wcnt", Produced.with(s, l));
    data.groupBy((key, value) -> "g" + (value % 10), Grouped.with(s, l))
        .count(Materialized.with(s, l))
        .toStream()
        .to(out + "tagg", Produced.with(s, l));
    return builder.build();
  }

  public static void main(String[] args) throws Exception {
    JsonNode spec = JSON.readTree(args[0]);
    Properties props = new Properties();
    props.put(StreamsConfig.APPLICATION_ID_CONFIG, spec.get("application_id").asText());
    props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, spec.get("servers").asText());
    props.put(StreamsConfig.STATE_DIR_CONFIG, spec.get("state_dir").asText());
    props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, spec.get("commit_ms").asLong());
    props.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
    KafkaStreams streams =
        new KafkaStreams(topology(spec.get("input").asText(), spec.get("output_prefix").asText()), props);
    CountDownLatch running = new CountDownLatch(1);
    streams.setStateListener(
        (now, before) -> {
          if (now == KafkaStreams.State.RUNNING) {
            running.countDown();
          }
        });
    streams.start();
    if (!running.await(120, TimeUnit.SECONDS)) {
      System.out.println("NOT RUNNING after 120 s: " + streams.state());
      System.exit(1);
    }
    System.out.println("RUNNING");
    System.out.flush();
    while (System.in.read() != -1) {
      // the driver closes standard input to stop us
    }
    streams.close(Duration.ofSeconds(60));
    System.exit(0);
  }
}
