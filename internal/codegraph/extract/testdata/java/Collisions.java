package com.acme.odd;

/** Names that collide and get #2. */
class Collisions {
    Collisions() {}

    // A method may be named like its class; it joins the constructors' set.
    void Collisions(int x) {}

    void convert(java.util.List<String> a) {}

    void convert(java.awt.List a) {}

    void helper() {
        class Local {}
    }

    class helper {}

    static {
        class Local {
            void m() {}
        }
    }

    class Local {}
}
