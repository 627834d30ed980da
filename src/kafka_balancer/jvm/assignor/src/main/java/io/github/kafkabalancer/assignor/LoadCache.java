package io.github.kafkabalancer.assignor;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads the loads topic in a background daemon thread and publishes an immutable snapshot that the
 * assignment path reads without blocking. Topic names are resolved to topic ids (the assignor sees
 * ids only) with an admin client. One reader per (bootstrap, topic) per JVM, shared by every
 * assignor instance the broker creates.
 */
final class LoadCache implements LoadView {
    private static final Logger LOG = LoggerFactory.getLogger(LoadCache.class);
    private static final Map<String, LoadCache> SHARED = new ConcurrentHashMap<>();
    static final String DEFAULT_TOPIC = "__kafka_balancer_partition_loads";

    /** Where and how to read loads. */
    record Settings(String bootstrap, String topic, long maxAgeMs, Map<String, Object> client) {
        String describe() {
            return "topic " + topic + " via " + bootstrap + ", max age " + maxAgeMs + " ms";
        }

        /** Null when loads are disabled or no listener can be derived (logged). */
        static Settings from(Map<String, ?> configs) {
            String p = KafkaBalancerAssignor.PREFIX + "loads.";
            Object enable = configs.get(p + "enable");
            if (enable != null && !Boolean.parseBoolean(enable.toString().trim())) {
                return null;
            }
            Object topicSetting = configs.get(p + "topic");
            String topic = topicSetting == null ? DEFAULT_TOPIC : topicSetting.toString().trim();
            long maxAge = (long) KafkaBalancerAssignor.number(configs, p + "max.age.ms", 3_600_000);
            Map<String, Object> client = new HashMap<>();
            for (Map.Entry<String, ?> e : configs.entrySet()) {
                if (e.getKey().startsWith(p + "client.")) {
                    client.put(e.getKey().substring((p + "client.").length()), e.getValue());
                }
            }
            Object explicit = configs.get(p + "bootstrap.servers");
            String bootstrap = explicit != null ? explicit.toString().trim() : ownListener(configs, client);
            if (bootstrap == null || bootstrap.isEmpty()) {
                LOG.warn("kafka-balancer: no PLAINTEXT inter-broker listener to read loads from; set {}bootstrap.servers "
                        + "(and {}client.* security settings); assigning by counts", p, p);
                return null;
            }
            return new Settings(bootstrap, topic, maxAge, client);
        }

        private static String ownListener(Map<String, ?> configs, Map<String, Object> client) {
            Object adv = configs.get("advertised.listeners");
            if (adv == null || adv.toString().isBlank()) {
                adv = configs.get("listeners");
            }
            if (adv == null) {
                return null;
            }
            Object ibl = configs.get("inter.broker.listener.name");
            String name = ibl == null ? "PLAINTEXT" : ibl.toString().trim();
            Map<String, String> protocols = new HashMap<>();
            Object map = configs.get("listener.security.protocol.map");
            if (map != null) {
                for (String kv : map.toString().split(",")) {
                    String[] x = kv.trim().split(":");
                    if (x.length == 2) {
                        protocols.put(x[0].trim(), x[1].trim());
                    }
                }
            }
            for (String l : adv.toString().split(",")) {
                String s = l.trim();
                int i = s.indexOf("://");
                if (i <= 0 || !s.substring(0, i).equals(name)) {
                    continue;
                }
                String protocol = protocols.getOrDefault(name, name);
                if (!"PLAINTEXT".equals(protocol) && !client.containsKey("security.protocol")) {
                    return null;
                }
                String hostPort = s.substring(i + 3);
                if (hostPort.startsWith(":") || hostPort.startsWith("0.0.0.0:")) {
                    hostPort = "127.0.0.1" + hostPort.substring(hostPort.indexOf(':'));
                }
                return hostPort;
            }
            return null;
        }
    }

    private record TopicLoads(double[] load, long[] ts) {
    }

    private final Settings settings;
    private final Thread thread;
    private volatile boolean closed;
    private volatile Map<Uuid, TopicLoads> snapshot = Map.of();
    private final Map<String, Map<Integer, LoadRecord>> table = new HashMap<>();
    private final Map<String, Uuid> ids = new HashMap<>();
    private final Set<String> warned = new HashSet<>();
    private int users;

    private LoadCache(Settings settings) {
        this.settings = settings;
        this.thread = new Thread(this::run, "kafka-balancer-loads");
        this.thread.setDaemon(true);
    }

    /** The shared reader for these settings, started on first use. */
    static LoadCache shared(Settings s) {
        LoadCache c = SHARED.computeIfAbsent(s.bootstrap() + "/" + s.topic(), k -> {
            LoadCache n = new LoadCache(s);
            n.thread.start();
            return n;
        });
        synchronized (c) {
            c.users++;
        }
        return c;
    }

    void release() {
        synchronized (this) {
            if (--users > 0) {
                return;
            }
        }
        SHARED.remove(settings.bootstrap() + "/" + settings.topic(), this);
        closed = true;
        thread.interrupt();
    }

    @Override
    public double load(Uuid topicId, int partition, long nowMs) {
        TopicLoads t = snapshot.get(topicId);
        if (t == null || partition < 0 || partition >= t.load.length || Double.isNaN(t.load[partition])) {
            return Double.NaN;
        }
        return nowMs - t.ts[partition] > settings.maxAgeMs() ? Double.NaN : t.load[partition];
    }

    @Override
    public void topic(Uuid topicId, int n, long nowMs, double[] out, int offset) {
        TopicLoads t = snapshot.get(topicId); // one lookup per topic, not per partition
        long maxAge = settings.maxAgeMs();
        for (int i = 0; i < n; i++) {
            out[offset + i] = t == null || i >= t.load.length || nowMs - t.ts[i] > maxAge ? Double.NaN : t.load[i];
        }
    }

    int knownTopics() {
        return snapshot.size();
    }

    private Properties props() {
        Properties p = new Properties();
        p.putAll(settings.client());
        p.put("bootstrap.servers", settings.bootstrap());
        p.put("client.id", "kafka-balancer-assignor-loads");
        return p;
    }

    private void run() {
        while (!closed) {
            try {
                loop();
            } catch (Throwable t) {
                if (closed) {
                    break;
                }
                warnOnce("kafka-balancer: load reader: " + t);
                sleep(5000);
            }
        }
    }

    private void loop() throws Exception {
        Properties cp = props();
        cp.put("key.deserializer", ByteArrayDeserializer.class.getName());
        cp.put("value.deserializer", ByteArrayDeserializer.class.getName());
        cp.put("enable.auto.commit", "false");
        cp.put("allow.auto.create.topics", "false");
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(cp); Admin admin = Admin.create(props())) {
            Set<TopicPartition> assigned = new HashSet<>();
            long lastCheck = 0;
            long lastResolve = 0;
            boolean dirty = false;
            while (!closed) {
                long now = System.currentTimeMillis();
                if (now - lastCheck > 30_000 || assigned.isEmpty()) {
                    lastCheck = now;
                    List<PartitionInfo> infos = consumer.partitionsFor(settings.topic(), Duration.ofSeconds(10));
                    Set<TopicPartition> all = new HashSet<>();
                    if (infos != null) {
                        for (PartitionInfo i : infos) {
                            all.add(new TopicPartition(i.topic(), i.partition()));
                        }
                    }
                    if (!all.equals(assigned)) {
                        Set<TopicPartition> added = new HashSet<>(all);
                        added.removeAll(assigned);
                        consumer.assign(all);
                        consumer.seekToBeginning(added);
                        assigned = all;
                    }
                    if (assigned.isEmpty()) {
                        sleep(1000); // the topic does not exist yet: look again soon (one metadata request)
                        continue;
                    }
                }
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofSeconds(1))) {
                    dirty |= apply(r.key(), r.value());
                }
                now = System.currentTimeMillis();
                if ((dirty && now - lastResolve > 1000) || now - lastResolve > 30_000) {
                    resolve(admin);
                    publish();
                    lastResolve = now;
                    dirty = false;
                }
            }
        }
    }

    private boolean apply(byte[] key, byte[] value) {
        LoadRecord rec;
        try {
            rec = LoadRecord.parse(key, value);
        } catch (IllegalArgumentException e) {
            warnOnce("kafka-balancer: skipping a record of " + settings.topic() + ": " + e.getMessage());
            return false;
        }
        if (rec == null) {
            String[] k = LoadRecord.key(key);
            Map<Integer, LoadRecord> t = table.get(k[0]);
            return t != null && t.remove(Integer.parseInt(k[1])) != null;
        }
        Map<Integer, LoadRecord> t = table.computeIfAbsent(rec.topic(), x -> new HashMap<>());
        LoadRecord old = t.get(rec.partition());
        if (old != null && old.tsMs() > rec.tsMs()) {
            return false;
        }
        t.put(rec.partition(), rec);
        return true;
    }

    private void resolve(Admin admin) throws Exception {
        if (table.isEmpty()) {
            return;
        }
        Map<String, KafkaFuture<TopicDescription>> futures =
                admin.describeTopics(new ArrayList<>(table.keySet())).topicNameValues();
        for (Map.Entry<String, KafkaFuture<TopicDescription>> e : futures.entrySet()) {
            try {
                ids.put(e.getKey(), e.getValue().get(10, TimeUnit.SECONDS).topicId());
            } catch (java.util.concurrent.ExecutionException ex) {
                ids.remove(e.getKey()); // deleted topic: its loads no longer apply
            }
        }
    }

    private void publish() {
        Map<Uuid, TopicLoads> next = new HashMap<>();
        for (Map.Entry<String, Map<Integer, LoadRecord>> e : table.entrySet()) {
            Uuid id = ids.get(e.getKey());
            if (id == null || e.getValue().isEmpty()) {
                continue;
            }
            int n = e.getValue().keySet().stream().mapToInt(Integer::intValue).max().orElse(-1) + 1;
            double[] load = new double[n];
            long[] ts = new long[n];
            Arrays.fill(load, Double.NaN);
            for (LoadRecord r : e.getValue().values()) {
                if (r.partition() >= 0) {
                    load[r.partition()] = r.load();
                    ts[r.partition()] = r.tsMs();
                }
            }
            next.put(id, new TopicLoads(load, ts));
        }
        if (next.size() != snapshot.size()) {
            LOG.info("kafka-balancer: loads known for {} topic(s) from {}", next.size(), settings.topic());
        }
        snapshot = Map.copyOf(next);
    }

    private void warnOnce(String msg) {
        if (warned.size() < 100 && warned.add(msg)) {
            LOG.warn(msg);
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
