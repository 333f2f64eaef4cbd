package com.acme.shapes;

public class Circle implements Shape {
    private final double r;

    public Circle(double r) {
        this.r = r;
    }

    public Circle() {
        this(1.0);
    }

    @Override
    public double area() {
        return Math.PI * square(r);
    }

    static double square(double x) {
        return x * x;
    }
}
