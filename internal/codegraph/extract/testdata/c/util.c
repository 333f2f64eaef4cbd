#include "util.h"
#include "net/socket.h"
#include <stdio.h>

#define MAX_ITEMS 64
#define SQUARE(x) ((x) * helper(x))
#define LOG(fmt, ...) fprintf(stderr, fmt, __VA_ARGS__)

struct list {
    struct list *next;
    struct entry { int key; } first;
    union { int i; float f; } value;
};

typedef struct {
    int x, y;
} point;

typedef struct node {
    struct node *left, *right;
} node_t;

typedef union {
    int i;
    double d;
} number;

enum color { RED, GREEN };

struct list *forward;

static int counter;

int (*handler)(int);

/* K&R definition */
int old_style(a, b)
    int a;
    char *b;
{
    return helper(a) + b[0];
}

static char *name_of(const point *p)
{
    return format_point(p);
}

static int (*pick(int which))(int)
{
    return which ? handler : 0;
}

void calls(struct list *s, point p)
{
    struct ops { int (*fn)(int); } o;
    helper(1);
    s->next->next = 0;
    list_free(s);
    s->fn(2);
    p.fn(3);
    s->next->value.fn(4);
    (*handler)(5);
    handler(6);
    (handler)(7);
    table[1](8);
    pick(1)(9);
    (*s->cb)(10);
    s->cbs[0](11);
    o.fn(SQUARE(12));
}

#ifdef USE_FAST
int compute(int x) { return fast(x); }
#elif defined(USE_SLOW)
int compute(int x) { return slow(x); }
#else
int compute(int x) { return x; }
#endif

int main(int argc, char **argv)
{
    return calls(0, origin()), 0;
}
