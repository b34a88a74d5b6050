package io.streamsruntime.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;

/**
 * One measured run of a benchmark workload on Kafka Streams, in its own JVM.
 *
 * <p>Called by bench/peers.py as {@code java -cp ... io.streamsruntime.bench.BenchMain '<json spec>'};
 * prints one JSON line: {@code seconds} (KafkaStreams RUNNING until the stream threads' {@code
 * process-total} metrics reach the input's record count, read every 20 ms), {@code cpu_s} (the
 * process's CPU time over that span: every thread, GC and JIT included), {@code seconds_to_commit}
 * (RUNNING until every input offset is committed) and {@code peak_rss_mb}. The spec names the workload, the broker, the topics, the application id, the
 * commit interval, the processing guarantee, the record cache size, the state directory and the
 * input's end offsets per partition; with {@code warmup_output}, the JVM first runs the same work
 * into that topic under another application id (not measured), so the measured run is a warm JVM's.
 */
public final class BenchMain {
  private static final ObjectMapper JSON = new ObjectMapper();

  private BenchMain() {}

  public static void main(String[] args) throws Exception {
    JsonNode spec = JSON.readTree(args[0]);
    if (spec.hasNonNull("warmup_output")) {
      // the same work once, into another topic under another application id, so that the measured
      // run finds the JIT's compiled code (a fresh JVM interprets for its first seconds)
      ObjectNode warmup = ((ObjectNode) spec).deepCopy();
      warmup.put("output", spec.get("warmup_output").asText());
      warmup.put("group", spec.get("group").asText() + "-warmup");
      warmup.put("state_dir", spec.get("state_dir").asText() + "-warmup");
      run(warmup, false);
    }
    System.out.println(JSON.writeValueAsString(run(spec, true)));
    System.out.flush();
    System.exit(0);
  }

  /** One run of the spec's workload; with {@code waitForCommit}, the commit is waited for too. */
  private static ObjectNode run(JsonNode spec, boolean waitForCommit) throws Exception {
    String appId = spec.get("group").asText();
    String input = spec.get("input").asText();
    Topology topology = Workloads.build(spec);

    Properties props = new Properties();
    props.put(StreamsConfig.APPLICATION_ID_CONFIG, appId);
    props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, spec.get("servers").asText());
    props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
    props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, spec.get("commit_ms").asLong());
    props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, spec.get("cache_bytes").asLong());
    props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, spec.get("guarantee").asText());
    props.put(StreamsConfig.STATE_DIR_CONFIG, spec.get("state_dir").asText());
    props.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");

    Map<TopicPartition, Long> ends = new java.util.HashMap<>();
    Iterator<Map.Entry<String, JsonNode>> it = spec.get("ends").fields();
    while (it.hasNext()) {
      Map.Entry<String, JsonNode> e = it.next();
      ends.put(new TopicPartition(input, Integer.parseInt(e.getKey())), e.getValue().asLong());
    }

    CountDownLatch running = new CountDownLatch(1);
    KafkaStreams streams = new KafkaStreams(topology, props);
    streams.setStateListener(
        (now, before) -> {
          if (now == KafkaStreams.State.RUNNING) {
            running.countDown();
          }
        });
    streams.start();
    if (!running.await(120, TimeUnit.SECONDS)) {
      throw new IllegalStateException("KafkaStreams did not reach RUNNING in 120 s: " + streams.state());
    }
    long started = System.nanoTime();
    long cpu0 = processCpuNanos();
    long total =
        spec.hasNonNull("processed_total")
            ? spec.get("processed_total").asLong()
            : ends.values().stream().mapToLong(Long::longValue).sum();
    while (processed(streams) < total) {
      checkAlive(streams);
      Thread.sleep(20);
    }
    double seconds = (System.nanoTime() - started) / 1e9;
    double cpu = (processCpuNanos() - cpu0) / 1e9;
    double toCommit = seconds;
    if (waitForCommit) {
      Properties adminProps = new Properties();
      adminProps.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, spec.get("servers").asText());
      try (Admin admin = Admin.create(adminProps)) {
        while (!committed(admin, appId, ends)) {
          checkAlive(streams);
          Thread.sleep(50);
        }
      }
      toCommit = (System.nanoTime() - started) / 1e9;
    }
    streams.close(Duration.ofSeconds(30));
    ObjectNode out = JSON.createObjectNode();
    out.put("seconds", seconds);
    out.put("cpu_s", cpu);
    out.put("seconds_to_commit", toCommit);
    out.put("peak_rss_mb", peakRssMb());
    return out;
  }

  /** The records the stream threads processed: the sum of their {@code process-total} metrics. */
  private static double processed(KafkaStreams streams) {
    double sum = 0;
    for (Map.Entry<MetricName, ? extends Metric> m : streams.metrics().entrySet()) {
      if (m.getKey().name().equals("process-total")
          && m.getKey().group().equals("stream-thread-metrics")) {
        sum += ((Number) m.getValue().metricValue()).doubleValue();
      }
    }
    return sum;
  }

  private static void checkAlive(KafkaStreams streams) {
    KafkaStreams.State state = streams.state();
    if (state == KafkaStreams.State.ERROR || state == KafkaStreams.State.NOT_RUNNING) {
      throw new IllegalStateException("KafkaStreams stopped: " + state);
    }
  }

  private static boolean committed(Admin admin, String group, Map<TopicPartition, Long> ends)
      throws Exception {
    Map<TopicPartition, OffsetAndMetadata> offsets =
        admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
    for (Map.Entry<TopicPartition, Long> end : ends.entrySet()) {
      OffsetAndMetadata at = offsets.get(end.getKey());
      if (end.getValue() > 0 && (at == null || at.offset() < end.getValue())) {
        return false;
      }
    }
    return true;
  }

  private static long processCpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }

  private static double peakRssMb() throws Exception {
    List<String> lines = new ArrayList<>(Files.readAllLines(Path.of("/proc/self/status")));
    for (String line : lines) {
      if (line.startsWith("VmHWM:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024.0;
      }
    }
    return -1;
  }
}
