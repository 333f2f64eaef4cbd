package com.acme.expr;

import java.util.List;
import java.util.function.IntSupplier;

/** Newer syntax: sealed types, record patterns, switch expressions, text blocks. */
public sealed interface Expr permits Expr.Num, Expr.Add, Neg {
    IntSupplier ZERO = new IntSupplier() {
        public int getAsInt() {
            return Integer.valueOf(0);
        }
    };

    record Num(int v) implements Expr {}

    record Add(Expr l, Expr r) implements Expr {}

    static int eval(Expr e) {
        return switch (e) {
            case Num(int v) when v < 0 -> -v;
            case Num n -> n.v();
            case Add(Expr l, Expr r) -> eval(l) + eval(r);
            case Neg n -> {
                int x = eval(n.inner);
                yield Math.negateExact(x);
            }
        };
    }
}

non-sealed class Neg implements Expr {
    final Expr inner;

    <T extends Expr> Neg(T inner) {
        this.inner = inner;
    }

    Neg(int v) {
        this(new Expr.Num(v));
    }
}

class Eval {
    static final String HELP = """
        usage: eval { expr } ( [
        """;

    enum Mode {
        STRICT {
            int limit() {
                return Limits.strict();
            }
        },
        LENIENT(new Runnable() {
            public void run() {
                Log.warn("lenient");
            }
        });

        Mode() {}

        Mode(Runnable onUse) {
            onUse.run();
        }

        int limit() {
            return Integer.MAX_VALUE;
        }
    }

    static int sum(List<Expr> es) {
        int total = 0;
        for (var _ : es) {
            total++;
        }
        return es.stream().mapToInt(Expr::eval).sum() + total;
    }
}
