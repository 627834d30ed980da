package io.github.kafkabalancer.assignor;

import java.io.FileOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Properties;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * A small Java consumer for tests and benchmarks (kafka-clients, new consumer group protocol).
 *
 * <pre>java -cp ... io.github.kafkabalancer.assignor.GroupConsumer BOOTSTRAP GROUP TOPIC OUT_FILE
 *      [--assignor NAME] [--per-record-ms MS] [--protocol consumer|classic]</pre>
 *
 * Writes to OUT_FILE (flushed before each commit, so a killed process never has committed a record it
 * did not write): {@code A <ts_ms> <p,p,...>} on every assignment change and
 * {@code R <partition> <offset> <record ts_ms> <consumed ts_ms>} per record. Offsets are committed
 * synchronously after each batch. Stops on SIGTERM.
 */
public final class GroupConsumer {
    private GroupConsumer() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 4) {
            System.err.println("usage: GroupConsumer BOOTSTRAP GROUP TOPIC OUT_FILE [--assignor NAME] "
                    + "[--per-record-ms MS] [--protocol consumer|classic]");
            System.exit(2);
        }
        String assignor = KafkaBalancerAssignor.NAME;
        double perRecordMs = 0;
        String protocol = "consumer";
        for (int i = 4; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--assignor" -> assignor = args[i + 1];
                case "--per-record-ms" -> perRecordMs = Double.parseDouble(args[i + 1]);
                case "--protocol" -> protocol = args[i + 1];
                default -> {
                    System.err.println("unknown option " + args[i]);
                    System.exit(2);
                }
            }
        }
        Properties p = new Properties();
        p.put("bootstrap.servers", args[0]);
        p.put("group.id", args[1]);
        p.put("group.protocol", protocol);
        if (protocol.equals("consumer")) {
            p.put("group.remote.assignor", assignor);
        } else {
            p.put("session.timeout.ms", "6000");
            p.put("heartbeat.interval.ms", "1000");
        }
        p.put("client.id", "kb-java-" + ProcessHandle.current().pid());
        p.put("enable.auto.commit", "false");
        p.put("auto.offset.reset", "earliest");
        p.put("max.poll.records", "100");
        p.put("key.deserializer", ByteArrayDeserializer.class.getName());
        p.put("value.deserializer", ByteArrayDeserializer.class.getName());
        AtomicBoolean stop = new AtomicBoolean();
        try (PrintStream out = new PrintStream(new FileOutputStream(args[3], true), false, StandardCharsets.UTF_8);
             KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
            Thread main = Thread.currentThread();
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                stop.set(true);
                consumer.wakeup();
                try {
                    main.join(10_000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }));
            TreeSet<Integer> mine = new TreeSet<>();
            consumer.subscribe(List.of(args[2]), new ConsumerRebalanceListener() {
                @Override
                public void onPartitionsRevoked(Collection<TopicPartition> parts) {
                    parts.forEach(tp -> mine.remove(tp.partition()));
                    report(out, mine);
                }

                @Override
                public void onPartitionsAssigned(Collection<TopicPartition> parts) {
                    parts.forEach(tp -> mine.add(tp.partition()));
                    report(out, mine);
                }

                @Override
                public void onPartitionsLost(Collection<TopicPartition> parts) {
                    onPartitionsRevoked(parts);
                }
            });
            while (!stop.get()) {
                ConsumerRecords<byte[], byte[]> recs;
                try {
                    recs = consumer.poll(Duration.ofMillis(500));
                } catch (org.apache.kafka.common.errors.WakeupException e) {
                    break;
                }
                for (ConsumerRecord<byte[], byte[]> r : recs) {
                    if (perRecordMs > 0) {
                        long nanos = (long) (perRecordMs * 1e6);
                        Thread.sleep(nanos / 1_000_000, (int) (nanos % 1_000_000));
                    }
                    out.printf("R %d %d %d %d%n", r.partition(), r.offset(), r.timestamp(), System.currentTimeMillis());
                }
                if (!recs.isEmpty()) {
                    out.flush();
                    try {
                        consumer.commitSync();
                    } catch (RuntimeException e) {
                        // a rebalance took the partitions: the records will be consumed again elsewhere
                        System.err.println("commit failed: " + e);
                    }
                }
            }
            out.flush();
        }
    }

    private static void report(PrintStream out, TreeSet<Integer> mine) {
        StringBuilder sb = new StringBuilder();
        for (int x : mine) {
            if (sb.length() > 0) {
                sb.append(',');
            }
            sb.append(x);
        }
        out.printf("A %d %s%n", System.currentTimeMillis(), sb.length() == 0 ? "-" : sb);
        out.flush();
    }
}
