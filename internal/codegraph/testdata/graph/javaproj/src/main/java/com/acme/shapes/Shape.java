package com.acme.shapes;

public interface Shape {
    double area();

    default String describe() {
        return "shape with area " + area();
    }
}
