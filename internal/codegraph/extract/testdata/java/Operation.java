package com.acme.calc;

import java.util.function.DoubleBinaryOperator;

/** An enum whose constants have bodies. */
public enum Operation implements DoubleBinaryOperator, Describable {
    PLUS("+") {
        @Override
        public double applyAsDouble(double a, double b) {
            return a + b;
        }
    },
    MINUS("-") {
        public double applyAsDouble(double a, double b) {
            return a - b;
        }

        @Override
        String describe() {
            return "minus " + super.describe();
        }
    },
    TIMES(Symbols.lookup("*")) {
        public double applyAsDouble(double a, double b) {
            return a * b;
        }

        double twice(double a) {
            return applyAsDouble(a, 2);
        }

        double twice(double a, double b) {
            return twice(applyAsDouble(a, b));
        }
    },
    @Deprecated
    IDENTITY;

    private final String symbol;

    Operation() {
        this("=");
    }

    Operation(String symbol) {
        this.symbol = symbol;
    }

    public double applyAsDouble(double a, double b) {
        throw new UnsupportedOperationException(name());
    }

    String describe() {
        return symbol;
    }

    static Operation parse(String s) {
        for (Operation op : values()) {
            if (op.symbol.equals(s)) {
                return op;
            }
        }
        throw new IllegalArgumentException(s);
    }

    enum Kind { UNARY, BINARY }
}
