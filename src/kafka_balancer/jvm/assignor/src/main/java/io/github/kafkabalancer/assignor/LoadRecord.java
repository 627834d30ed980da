package io.github.kafkabalancer.assignor;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;

/**
 * One record of the loads topic. Key: {@code <topic>:<partition>} in UTF-8 (':' cannot occur in a
 * topic name). Value: a JSON object {@code {"v": 1, "generation": G, "ts_ms": T, "load": L, ...}};
 * a null value (tombstone) deletes the key. Records of another format version are skipped.
 * The Python side (kafka_balancer.consumer.load_topic) writes the same format.
 */
record LoadRecord(String topic, int partition, double load, long tsMs, long generation) {
    static final int VERSION = 1;
    private static final ObjectMapper JSON = new ObjectMapper();

    /** Parses the key; null when it is not {@code topic:partition}. */
    static String[] key(byte[] key) {
        if (key == null) {
            return null;
        }
        String k = new String(key, StandardCharsets.UTF_8);
        int i = k.lastIndexOf(':');
        if (i <= 0 || i == k.length() - 1) {
            return null;
        }
        return new String[] {k.substring(0, i), k.substring(i + 1)};
    }

    /** Parses a record; null for a tombstone; throws IllegalArgumentException for anything malformed. */
    static LoadRecord parse(byte[] key, byte[] value) {
        String[] k = key(key);
        if (k == null) {
            throw new IllegalArgumentException("key is not <topic>:<partition>");
        }
        int partition;
        try {
            partition = Integer.parseInt(k[1]);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("key partition is not a number: " + k[1], e);
        }
        if (value == null) {
            return null;
        }
        JsonNode v;
        try {
            v = JSON.readTree(value);
        } catch (java.io.IOException e) {
            throw new IllegalArgumentException("value is not JSON", e);
        }
        if (v == null || !v.isObject() || v.path("v").asInt(-1) != VERSION) {
            throw new IllegalArgumentException("value has format version " + (v == null ? "?" : v.path("v"))
                    + ", this assignor reads " + VERSION);
        }
        JsonNode load = v.get("load");
        JsonNode ts = v.get("ts_ms");
        if (load == null || !load.isNumber() || ts == null || !ts.canConvertToLong()) {
            throw new IllegalArgumentException("value lacks a numeric 'load' or 'ts_ms'");
        }
        double l = load.asDouble();
        if (!Double.isFinite(l) || l < 0) {
            throw new IllegalArgumentException("load " + l + " is not a finite number >= 0");
        }
        return new LoadRecord(k[0], partition, l, ts.asLong(), v.path("generation").asLong(0));
    }
}
