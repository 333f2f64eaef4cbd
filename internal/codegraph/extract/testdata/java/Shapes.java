package com.acme.shapes;

import java.util.function.Function;

/** Interfaces: default, static and abstract methods. */
public interface Shape extends Comparable<Shape>, java.io.Serializable {
    double PI_ISH = Math.floor(Math.PI * 100) / 100;

    double area();

    String name();

    default int compareTo(Shape other) {
        return Double.compare(area(), other.area());
    }

    default String describe() {
        return String.format("%s(%.2f)", name(), this.area());
    }

    static Shape unit() {
        return new Square(1);
    }

    interface Visitor<R> {
        R visitCircle(Circle c);

        R visitSquare(Square s);

        default R visit(Shape s) {
            return s instanceof Circle c ? visitCircle(c) : visitSquare((Square) s);
        }
    }
}

sealed interface Polygon extends Shape permits Square, Triangle {
    int sides();
}

abstract class AbstractShape implements Shape {
    protected abstract double scale(double factor);

    @Override
    public String name() {
        return getClass().getSimpleName().toLowerCase();
    }
}

final class Square extends AbstractShape implements Polygon {
    private final double side;

    Square(double side) {
        this.side = side;
    }

    public double area() {
        return side * side;
    }

    public int sides() {
        return 4;
    }

    protected double scale(double factor) {
        return new Square(side * factor).area();
    }

    @Override
    public String describe() {
        return "square " + Polygon.super.describe();
    }
}
