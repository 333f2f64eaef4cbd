/* Macro calls tree-sitter cannot read as written (cStatementMacros). */
#include <stdarg.h>

#define run_with_period(ms) if (every(ms))
#define GET_VALUE(v) long long v = get()
#define NO_SANITIZE(s) __attribute__((no_sanitize(s)))

static const char *help[] = {
    "GET",
#ifdef WITH_MALLCTL
    "MALLCTL",
#endif
    "SET",
    NULL
};

int every(int ms) {
    return ms > 0;
}

long long get(void) {
    return 1;
}

void cron(void) {
    run_with_period(100) {
        every(1);
    }
    run_with_period(1000) get();
}

int check(long long x) {
    x++;
    GET_VALUE(prev)
    if (prev != x) return 0;
    return 1;
}

int sum(int n, ...) {
    va_list ap;
    va_start(ap, n);
    long long a = va_arg(ap, long long);
    char *s = va_arg(ap, char*);
    va_end(ap);
    return (int)a + (s != NULL);
}

NO_SANITIZE("bounds")
int last(int *p) {
    return p[0];
}

/* Macros standing for braces, calls opening blocks with their arguments
 * on the next lines, and a conditional cutting an else-if chain. */
#define set_field(name) } else if (!strcmp(key, name)) {
#define set_else } else

int strcmp(const char *a, const char *b);

int set(const char *key) {
    int n = 0;
    if (0) {
    set_field("a") {
        n = 1;
    } set_field(
      "b") {
        n = 2;
    } set_field(
      "c"){
        n = 3;
#ifdef WITH_D
    } set_field("d") {
        n = 4;
#endif
    } set_else {
        n = -1;
    }
    return n;
}

#define STRINGIFY(x) #x
static const char *usage =
    "at most " STRINGIFY(64) " bytes"
#ifdef WITH_D
    " (or d)"
#endif
    ".";

struct report {
    int time;
} typedef report;

int after(void) {
    return set("a");
}
