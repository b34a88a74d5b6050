package io.streamsruntime.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The oracle process: reads cases (docs/oracle.md), one JSON object per line on stdin, and writes
 * each one's result as one JSON line on stdout, flushed, in order, until stdin ends. One process
 * serves a whole test session; the JVM and Kafka Streams' classes are loaded once.
 */
public final class OracleMain {
    private OracleMain() {}

    public static void main(final String[] args) throws IOException {
        final ObjectMapper mapper = new ObjectMapper();
        final Path stateDir = Files.createTempDirectory("kafka-streams-oracle-");
        final CaseRunner runner = new CaseRunner(stateDir);
        final PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            if (line.isBlank()) {
                continue;
            }
            ObjectNode result;
            try {
                result = runner.run(mapper.readTree(line));
            } catch (IOException | RuntimeException e) {
                result = mapper.createObjectNode();
                result.putArray("records");
                result.put("error", "bad case: " + e);
            }
            out.println(mapper.writeValueAsString(result));
            out.flush();
        }
    }
}
