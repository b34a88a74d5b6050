package org.slf4j.impl;

import io.streamsruntime.oracle.LogCapture;
import org.slf4j.ILoggerFactory;
import org.slf4j.spi.LoggerFactoryBinder;

/**
 * The oracle's SLF4J 1.7 binding (in place of slf4j-nop): every logger drops what it is given,
 * except warnings, which go to {@link LogCapture} so a case can compare the records Kafka Streams
 * skipped (docs/oracle.md, "Warnings"). Nothing is written to stdout, which carries results only.
 */
public final class StaticLoggerBinder implements LoggerFactoryBinder {
    /** The SLF4J API version this binding is compiled against (read by LoggerFactory). */
    public static String REQUESTED_API_VERSION = "1.6.99";
    private static final StaticLoggerBinder SINGLETON = new StaticLoggerBinder();
    private final ILoggerFactory factory = CapturingLogger::new;

    private StaticLoggerBinder() {}

    public static StaticLoggerBinder getSingleton() {
        return SINGLETON;
    }

    @Override
    public ILoggerFactory getLoggerFactory() {
        return factory;
    }

    @Override
    public String getLoggerFactoryClassStr() {
        return CapturingLogger.class.getName();
    }

    /** A logger that keeps warnings (formatted, as SLF4J formats them) and drops the rest. */
    static final class CapturingLogger extends org.slf4j.helpers.MarkerIgnoringBase {
        private static final long serialVersionUID = 1L;

        CapturingLogger(final String name) {
            this.name = name;
        }

        private static void warning(final String format, final Object... args) {
            LogCapture.warn(org.slf4j.helpers.MessageFormatter.arrayFormat(format, args).getMessage());
        }

        @Override public boolean isTraceEnabled() { return false; }
        @Override public void trace(final String msg) {}
        @Override public void trace(final String format, final Object arg) {}
        @Override public void trace(final String format, final Object arg1, final Object arg2) {}
        @Override public void trace(final String format, final Object... arguments) {}
        @Override public void trace(final String msg, final Throwable t) {}
        @Override public boolean isDebugEnabled() { return false; }
        @Override public void debug(final String msg) {}
        @Override public void debug(final String format, final Object arg) {}
        @Override public void debug(final String format, final Object arg1, final Object arg2) {}
        @Override public void debug(final String format, final Object... arguments) {}
        @Override public void debug(final String msg, final Throwable t) {}
        @Override public boolean isInfoEnabled() { return false; }
        @Override public void info(final String msg) {}
        @Override public void info(final String format, final Object arg) {}
        @Override public void info(final String format, final Object arg1, final Object arg2) {}
        @Override public void info(final String format, final Object... arguments) {}
        @Override public void info(final String msg, final Throwable t) {}
        @Override public boolean isWarnEnabled() { return true; }
        @Override public void warn(final String msg) { LogCapture.warn(msg); }
        @Override public void warn(final String format, final Object arg) { warning(format, arg); }
        @Override public void warn(final String format, final Object arg1, final Object arg2) { warning(format, arg1, arg2); }
        @Override public void warn(final String format, final Object... arguments) { warning(format, arguments); }
        @Override public void warn(final String msg, final Throwable t) { LogCapture.warn(msg); }
        @Override public boolean isErrorEnabled() { return false; }
        @Override public void error(final String msg) {}
        @Override public void error(final String format, final Object arg) {}
        @Override public void error(final String format, final Object arg1, final Object arg2) {}
        @Override public void error(final String format, final Object... arguments) {}
        @Override public void error(final String msg, final Throwable t) {}
    }
}
