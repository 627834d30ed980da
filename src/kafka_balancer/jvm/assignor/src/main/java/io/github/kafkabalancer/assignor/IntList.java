package io.github.kafkabalancer.assignor;

import java.util.Arrays;

/** A growable list of ints (a member's partitions during local search). */
final class IntList {
    int[] data = new int[8];
    int size;

    void add(int v) {
        if (size == data.length) {
            data = Arrays.copyOf(data, size * 2);
        }
        data[size++] = v;
    }

    /** Removes the first occurrence of v, keeping the order of the rest (as the reference's arrays do). */
    void removeValue(int v) {
        for (int i = 0; i < size; i++) {
            if (data[i] == v) {
                System.arraycopy(data, i + 1, data, i, size - i - 1);
                size--;
                return;
            }
        }
    }

    int[] toArray() {
        return Arrays.copyOf(data, size);
    }

    int[] filterClass(int[] classOf, int k) {
        int n = 0;
        int[] out = new int[size];
        for (int i = 0; i < size; i++) {
            if (classOf[data[i]] == k) {
                out[n++] = data[i];
            }
        }
        return Arrays.copyOf(out, n);
    }
}
