package com.acme.meta;

import java.lang.annotation.*;

/** Annotation types, and annotations inside declaration spans. */
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.METHOD, ElementType.TYPE})
public @interface Route {
    String value() default "/";

    String[] methods() default {"GET"};

    int priority() default 0;

    enum Scope { REQUEST, SESSION }

    @interface Param {
        String name();
    }
}

@Route(value = "/users", methods = {"GET", "POST"})
class UserController {
    @Route("/users/{id}")
    @Deprecated(since = "2.0")
    public User get(@Route.Param(name = "id") long id) {
        return Users.find(id);
    }

    // A comment before an annotation stays outside the span.
    @SuppressWarnings({"rawtypes", "unchecked"})
    public
    static void list() {
        Users.all();
    }
}
