package io.github.kafkabalancer.assignor;

import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;
import org.apache.kafka.common.Uuid;

/**
 * An immutable map topic id -&gt; partitions over a slice of shared arrays: one member's assignment, one
 * entry per topic. Replaces a HashMap per member (and a node per entry) in results of 100,000
 * partitions; lookups scan the slice (a member holds few topics).
 */
final class TopicMap extends AbstractMap<Uuid, Set<Integer>> {
    private final Uuid[] keys;
    private final Set<Integer>[] values;
    private final int from;
    private final int to;

    TopicMap(Uuid[] keys, Set<Integer>[] values, int from, int to) {
        this.keys = keys;
        this.values = values;
        this.from = from;
        this.to = to;
    }

    @Override
    public int size() {
        return to - from;
    }

    @Override
    public Set<Integer> get(Object key) {
        for (int i = from; i < to; i++) {
            if (keys[i].equals(key)) {
                return values[i];
            }
        }
        return null;
    }

    @Override
    public boolean containsKey(Object key) {
        return get(key) != null;
    }

    @Override
    public Set<Map.Entry<Uuid, Set<Integer>>> entrySet() {
        return new AbstractSet<>() {
            @Override
            public int size() {
                return to - from;
            }

            @Override
            public Iterator<Map.Entry<Uuid, Set<Integer>>> iterator() {
                return new Iterator<>() {
                    private int i = from;

                    @Override
                    public boolean hasNext() {
                        return i < to;
                    }

                    @Override
                    public Map.Entry<Uuid, Set<Integer>> next() {
                        if (i >= to) {
                            throw new NoSuchElementException();
                        }
                        int k = i++;
                        return new AbstractMap.SimpleImmutableEntry<>(keys[k], values[k]);
                    }
                };
            }
        };
    }
}
