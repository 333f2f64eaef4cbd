package com.acme.broken;

import java.util.List;

public class Broken {
    private int count;

    void ok() {
        helper();
    }

    void missingParen( {
        helper(;
    }

    int alsoOk() {
        return count + compute();
    }
}

class After extends Broken {
    void m() { ok(); }
}
