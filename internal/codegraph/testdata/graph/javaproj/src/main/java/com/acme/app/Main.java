package com.acme.app;

import com.acme.shapes.Circle;
import com.acme.shapes.Shape;
import java.util.List;

public class Main {
    public static void main(String[] args) {
        List<Shape> shapes = List.of(new Circle(2), new Circle());
        for (Shape s : shapes) {
            print(s);
        }
        Runnable r = new Runnable() {
            public void run() {
                print(new Circle());
            }
        };
        r.run();
    }

    static void print(Shape s) {
        System.out.println(s.describe());
    }
}
