/*
 * A class with overloaded constructors and methods.
 */
package com.acme.util;

import java.util.List;
import java.util.Map;
import java.util.concurrent.*;
import static java.util.Objects.requireNonNull;
import static org.junit.Assert.*;

/** Buffers values; the Javadoc is not part of the span. */
@SuppressWarnings("unchecked")
public final class Buffer<T extends Comparable<T>> extends AbstractBuffer<T>
        implements java.io.Serializable, Comparable<Buffer<T>>, Iterable<T> {

    private static final Map<String, Integer> CACHE = Caches.newCache(16);
    private final List<T> items = new java.util.ArrayList<T>();
    private int size;

    static {
        Registry.register(Buffer.class);
    }

    {
        size = initialSize();
    }

    public Buffer() {
        this(16);
    }

    public Buffer(int capacity) {
        super(capacity);
        requireNonNull(items);
    }

    protected Buffer(List<? extends T> initial, int... extra) {
        this(initial.size());
        addAll(initial);
    }

    @Override
    public int compareTo(Buffer<T> other) {
        return Integer.compare(size, other.size);
    }

    public void add(T item) {
        items.add(item);
        this.size++;
    }

    public void add(T[] batch) {
        for (T t : batch) {
            add(t);
        }
    }

    public void add(int index, final @Nonnull T item) {
        items.add(index, item);
    }

    void add(Map.Entry<String, List<T>>[][] entries, String... labels) {
        super.add(entries.length);
    }

    void legacy(Buffer<T> this, int values[]) {
        Arrays.sort(values);
    }

    void legacy(long value) {
        legacy(new int[] {(int) value});
    }

    private static <K, V> Map<K, V> copy(Map<? extends K, ? extends V> m) {
        return new java.util.HashMap<>(m);
    }

    public java.util.Iterator<T> iterator() {
        return items.iterator();
    }

    private int initialSize() {
        return CACHE.getOrDefault(getClass().getName(), 0);
    }
}
