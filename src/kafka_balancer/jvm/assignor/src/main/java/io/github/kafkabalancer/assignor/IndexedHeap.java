package io.github.kafkabalancer.assignor;

import java.util.Arrays;

/** A binary min-heap of member positions keyed by a double, with O(log n) update and removal. */
final class IndexedHeap {
    private final int[] heap;
    private final int[] pos; // position in heap, -1 = absent
    private final double[] key;
    private int size;

    IndexedHeap(int capacity) {
        heap = new int[capacity];
        pos = new int[capacity];
        key = new double[capacity];
        Arrays.fill(pos, -1);
    }

    int size() {
        return size;
    }

    boolean contains(int m) {
        return pos[m] >= 0;
    }

    /** The member with the least key; -1 when empty. */
    int top() {
        return size == 0 ? -1 : heap[0];
    }

    /** The member with the least key other than {@code skip}; -1 when there is none. */
    int topExcept(int skip) {
        if (size == 0) {
            return -1;
        }
        if (heap[0] != skip) {
            return heap[0];
        }
        int best = -1;
        for (int i = 1; i <= 2 && i < size; i++) {
            if (best < 0 || less(heap[i], best)) {
                best = heap[i];
            }
        }
        return best;
    }

    double keyOf(int m) {
        return key[m];
    }

    void set(int m, double k) {
        if (pos[m] < 0) {
            key[m] = k;
            heap[size] = m;
            pos[m] = size;
            size++;
            up(pos[m]);
            return;
        }
        double old = key[m];
        key[m] = k;
        if (k < old) {
            up(pos[m]);
        } else {
            down(pos[m]);
        }
    }

    void remove(int m) {
        int i = pos[m];
        if (i < 0) {
            return;
        }
        size--;
        pos[m] = -1;
        if (i == size) {
            return;
        }
        int last = heap[size];
        heap[i] = last;
        pos[last] = i;
        up(i);
        down(pos[last]);
    }

    /** Key order, ties by member position (as Python's (key, member) heap tuples). */
    private boolean less(int x, int y) {
        return key[x] < key[y] || (key[x] == key[y] && x < y);
    }

    private void up(int i) {
        int m = heap[i];
        while (i > 0) {
            int parent = (i - 1) >>> 1;
            int pm = heap[parent];
            if (!less(m, pm)) {
                break;
            }
            heap[i] = pm;
            pos[pm] = i;
            i = parent;
        }
        heap[i] = m;
        pos[m] = i;
    }

    private void down(int i) {
        int m = heap[i];
        while (true) {
            int c = 2 * i + 1;
            if (c >= size) {
                break;
            }
            if (c + 1 < size && less(heap[c + 1], heap[c])) {
                c++;
            }
            if (!less(heap[c], m)) {
                break;
            }
            heap[i] = heap[c];
            pos[heap[i]] = i;
            i = c;
        }
        heap[i] = m;
        pos[m] = i;
    }
}
