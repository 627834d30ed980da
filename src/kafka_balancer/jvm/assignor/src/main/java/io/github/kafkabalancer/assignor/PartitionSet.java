package io.github.kafkabalancer.assignor;

import java.util.AbstractSet;
import java.util.Arrays;
import java.util.Iterator;
import java.util.NoSuchElementException;

/**
 * An immutable set of partition numbers over a slice of a sorted int array: what a member gets of one
 * topic. No boxing is stored (one Integer per element is made only while iterating), so a result for
 * 100,000 partitions costs a few arrays instead of 100,000 hash-set nodes.
 */
final class PartitionSet extends AbstractSet<Integer> {
    private final int[] data; // ascending in [from, to)
    private final int from;
    private final int to;

    PartitionSet(int[] data, int from, int to) {
        this.data = data;
        this.from = from;
        this.to = to;
    }

    @Override
    public int size() {
        return to - from;
    }

    @Override
    public boolean contains(Object o) {
        return o instanceof Integer i && Arrays.binarySearch(data, from, to, i) >= 0;
    }

    @Override
    public Iterator<Integer> iterator() {
        return new Iterator<>() {
            private int i = from;

            @Override
            public boolean hasNext() {
                return i < to;
            }

            @Override
            public Integer next() {
                if (i >= to) {
                    throw new NoSuchElementException();
                }
                return data[i++];
            }
        };
    }

    @Override
    public int hashCode() {
        int h = 0;
        for (int i = from; i < to; i++) {
            h += data[i]; // Integer.hashCode is the value: the same as any Set<Integer>'s
        }
        return h;
    }
}
