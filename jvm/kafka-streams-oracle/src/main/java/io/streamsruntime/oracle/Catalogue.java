package io.streamsruntime.oracle;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.kstream.Aggregator;
import org.apache.kafka.streams.kstream.Initializer;
import org.apache.kafka.streams.kstream.KeyValueMapper;
import org.apache.kafka.streams.kstream.Merger;
import org.apache.kafka.streams.kstream.Predicate;
import org.apache.kafka.streams.kstream.Reducer;
import org.apache.kafka.streams.kstream.ValueJoiner;
import org.apache.kafka.streams.kstream.ValueMapper;

/**
 * The named functions a case may use (docs/oracle.md, "The catalogue"), each total over null keys
 * and values. The Python side (tests/oracle/catalogue.py) defines the same names with the same
 * results; a name either side does not know is an error of the case.
 */
final class Catalogue {
    private Catalogue() {}

    @SuppressWarnings("unchecked")
    static Serde<Object> serde(final String type) {
        switch (type) {
            case "string":
                return (Serde<Object>) (Serde<?>) Serdes.String();
            case "long":
                return (Serde<Object>) (Serde<?>) Serdes.Long();
            default:
                throw new IllegalArgumentException("unknown type " + type);
        }
    }

    static ValueMapper<Object, Object> valueMapper(final String name) {
        switch (name) {
            case "upper":
                return v -> v == null ? null : ((String) v).toUpperCase(Locale.ROOT);
            case "len":
                return v -> v == null ? null : (long) ((String) v).length();
            case "double":
                return v -> v == null ? null : (Long) v * 2;
            case "to_string":
                return v -> v == null ? null : v.toString();
            default:
                throw new IllegalArgumentException("unknown value mapper " + name);
        }
    }

    static Predicate<Object, Object> predicate(final String name) {
        switch (name) {
            case "even_len":
                return (k, v) -> v != null && ((String) v).length() % 2 == 0;
            case "not_null":
                return (k, v) -> v != null;
            case "key_is_a":
                return (k, v) -> "a".equals(k);
            case "positive":
                return (k, v) -> v != null && (Long) v > 0;
            case "even":
                return (k, v) -> v != null && (Long) v % 2 == 0;
            default:
                throw new IllegalArgumentException("unknown predicate " + name);
        }
    }

    /** A key selector: the new key of (key, value), null where the function has none. */
    static Object selectKey(final String name, final Object key, final Object value) {
        switch (name) {
            case "value":
                return value;
            case "first_char":
                return value == null || ((String) value).isEmpty() ? null : ((String) value).substring(0, 1);
            case "key_mod_3":
                return key == null || ((String) key).isEmpty() ? null : String.valueOf(((String) key).codePointAt(0) % 3);
            case "value_mod_3":
                return value == null ? null : String.valueOf(Math.floorMod((Long) value, 3L));
            default:
                throw new IllegalArgumentException("unknown key selector " + name);
        }
    }

    static KeyValueMapper<Object, Object, Object> keySelector(final String name) {
        selectKey(name, null, null);
        return (k, v) -> selectKey(name, k, v);
    }

    /** A foreign-key extractor: a key selector's name, the other table's key of (key, value). */
    static java.util.function.BiFunction<Object, Object, Object> foreignKeyExtractor(final String name) {
        selectKey(name, null, null);
        return (k, v) -> selectKey(name, k, v);
    }

    /** map: "swap" exchanges key and value (both strings); a key selector's name re-keys, value kept. */
    static KeyValueMapper<Object, Object, KeyValue<Object, Object>> keyValueMapper(final String name) {
        if (name.equals("swap")) {
            return (k, v) -> KeyValue.pair(v, k);
        }
        selectKey(name, null, null);
        return (k, v) -> KeyValue.pair(selectKey(name, k, v), v);
    }

    static ValueMapper<Object, Iterable<Object>> flatValueMapper(final String name) {
        switch (name) {
            case "chars":
                return v -> {
                    final List<Object> out = new ArrayList<>();
                    if (v != null) {
                        ((String) v).codePoints().forEach(c -> out.add(new String(Character.toChars(c))));
                    }
                    return out;
                };
            case "dup":
                return v -> {
                    final List<Object> out = new ArrayList<>();
                    out.add(v);
                    out.add(v);
                    return out;
                };
            default:
                throw new IllegalArgumentException("unknown flat value mapper " + name);
        }
    }

    /** Reducers treat a null operand as "" (concat), 0 (sum) or absent (max). */
    static Reducer<Object> reducer(final String name) {
        switch (name) {
            case "concat":
                return (a, b) -> (a == null ? "" : (String) a) + (b == null ? "" : (String) b);
            case "max":
                return (a, b) -> {
                    if (a == null || b == null) {
                        return a == null ? b : a;
                    }
                    if (a instanceof Long) {
                        return Math.max((Long) a, (Long) b);
                    }
                    return ((String) a).compareTo((String) b) >= 0 ? a : b;
                };
            case "sum":
                return (a, b) -> (a == null ? 0L : (Long) a) + (b == null ? 0L : (Long) b);
            default:
                throw new IllegalArgumentException("unknown reducer " + name);
        }
    }

    static Initializer<Object> initializer(final String name) {
        switch (name) {
            case "sum_len":
            case "sum":
                return () -> 0L;
            case "concat":
                return () -> "";
            default:
                throw new IllegalArgumentException("unknown aggregator " + name);
        }
    }

    static Aggregator<Object, Object, Object> aggregator(final String name) {
        switch (name) {
            case "sum_len":
                return (k, v, agg) -> (Long) agg + (v == null ? 0 : ((String) v).length());
            case "sum":
                return (k, v, agg) -> (Long) agg + (v == null ? 0L : (Long) v);
            case "concat":
                return (k, v, agg) -> v == null ? agg : (String) agg + (String) v;
            default:
                throw new IllegalArgumentException("unknown aggregator " + name);
        }
    }

    /** The aggregate's type of an aggregator. */
    static String aggregateType(final String name) {
        return name.equals("concat") ? "string" : "long";
    }

    /** Removes the first occurrence of part from whole (null read as ""): concat's inverse. */
    private static String removeFirst(final Object whole, final Object part) {
        final String w = whole == null ? "" : (String) whole;
        final String p = part == null ? "" : (String) part;
        final int at = w.indexOf(p);
        return p.isEmpty() || at < 0 ? w : w.substring(0, at) + w.substring(at + p.length());
    }

    /** A table reduce's subtractor: the inverse of the reducer of the same name (max has none). */
    static Reducer<Object> tableSubtractor(final String name) {
        switch (name) {
            case "concat":
                return (agg, old) -> removeFirst(agg, old);
            case "sum":
                return (agg, old) -> (agg == null ? 0L : (Long) agg) - (old == null ? 0L : (Long) old);
            default:
                throw new IllegalArgumentException("no table subtractor for reducer " + name);
        }
    }

    /** A table aggregate's subtractor: the inverse of the aggregator of the same name. */
    static Aggregator<Object, Object, Object> tableAggregateSubtractor(final String name) {
        switch (name) {
            case "sum_len":
                return (k, v, agg) -> (Long) agg - (v == null ? 0 : ((String) v).length());
            case "sum":
                return (k, v, agg) -> (Long) agg - (v == null ? 0L : (Long) v);
            case "concat":
                return (k, v, agg) -> removeFirst(agg, v);
            default:
                throw new IllegalArgumentException("unknown aggregator " + name);
        }
    }

    /** A session aggregate's merger: the two sessions' aggregates added (numbers) or joined (strings), in order. */
    static Merger<Object, Object> merger(final String name) {
        switch (name) {
            case "sum_len":
            case "sum":
                return (k, a, b) -> (Long) a + (Long) b;
            case "concat":
                return (k, a, b) -> (String) a + (String) b;
            default:
                throw new IllegalArgumentException("unknown aggregator " + name);
        }
    }

    private static String show(final Object value) {
        return value == null ? "-" : value.toString();
    }

    static ValueJoiner<Object, Object, Object> valueJoiner(final String name) {
        switch (name) {
            case "pair":
                return (l, r) -> show(l) + "|" + show(r);
            default:
                throw new IllegalArgumentException("unknown value joiner " + name);
        }
    }

    /** The result type of a value joiner. */
    static String joinerType(final String name) {
        valueJoiner(name);
        return "string";
    }
}
