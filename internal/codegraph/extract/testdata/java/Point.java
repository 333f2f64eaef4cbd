package com.acme.geo;

import java.util.Objects;

/** Records: compact constructors are constructors. */
public record Point(double x, double y) implements Comparable<Point>, Cloneable {
    public static final Point ORIGIN = new Point(0, 0);

    public Point {
        if (Double.isNaN(x) || Double.isNaN(y)) {
            throw new IllegalArgumentException("NaN");
        }
    }

    public Point(double[] xy) {
        this(xy[0], xy[1]);
    }

    public Point(String s) {
        this(Parsers.parse(s));
    }

    public double distance(Point other) {
        return Math.hypot(x - other.x(), y - other.y());
    }

    @Override
    public int compareTo(Point o) {
        return Double.compare(distance(ORIGIN), o.distance(ORIGIN));
    }

    public static Point of(double x, double y) {
        return new Point(x, y);
    }

    record Pair<A, B>(A first, B second) {
        Pair {
            Objects.requireNonNull(first);
        }
    }
}

record Segment(Point from, Point to) {
    double length() {
        return from.distance(to);
    }
}
