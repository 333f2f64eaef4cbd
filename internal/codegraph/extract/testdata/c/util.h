#ifndef UTIL_H
#define UTIL_H

#include <stddef.h>

struct buffer {
    char *data;
    size_t len;
};

int helper(int x);
extern char *format_point(const void *p);
void list_free(struct list *l), list_init(struct list *l);
struct buffer *buffer_new(size_t cap);
int (*get_handler(void))(int);
typedef int (*callback_t)(int);
typedef int handler_fn(int);

static inline size_t buffer_len(const struct buffer *b)
{
    return b ? b->len : 0;
}

#endif
