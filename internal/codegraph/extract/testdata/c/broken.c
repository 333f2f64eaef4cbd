#include "broken.h"

int good(int x)
{
    return other(x);
}

static void jv_dump_term(int flags)
{
    if (flags) {
#ifdef USE_DECNUM
        if (literal()) {
            print_literal();
        } else {
#endif
            print_double();
        }
#ifdef USE_DECNUM
    }
#endif
}

void after(void)
{
    good(1);
}

TEST_BEGIN(test_basic) {
    expect(good(2));
}
TEST_END

int truncated(int y) {
    if (y) {
        return good(
