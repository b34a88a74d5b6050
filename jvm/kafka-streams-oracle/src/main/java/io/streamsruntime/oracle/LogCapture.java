package io.streamsruntime.oracle;

import java.util.ArrayList;
import java.util.List;

/**
 * The warnings Kafka Streams logged since the last {@link #drain()}, formatted: the oracle's SLF4J
 * binding ({@code org.slf4j.impl.StaticLoggerBinder}) hands them here. Only "Skipping record ..."
 * warnings are kept (the ones a case compares); the driver runs on one thread.
 */
public final class LogCapture {
    private static final List<String> WARNINGS = new ArrayList<>();

    private LogCapture() {}

    public static synchronized void warn(final String message) {
        if (message != null && message.startsWith("Skipping record")) {
            WARNINGS.add(message);
        }
    }

    static synchronized List<String> drain() {
        final List<String> out = new ArrayList<>(WARNINGS);
        WARNINGS.clear();
        return out;
    }
}
