// Imitates fmt's macro style.
#include "fmt/base.h"

FMT_BEGIN_NAMESPACE
namespace detail {

FMT_CONSTEXPR inline auto to_unsigned(int value) -> unsigned {
    FMT_ASSERT(value >= 0, "negative value");
    return static_cast<unsigned>(value);
}

template <typename Char> FMT_CONSTEXPR20 void copy_str(const Char* begin, const Char* end, Char* out) {
    while (begin != end) *out++ = *begin++;
}

class FMT_API format_error : public std::runtime_error {
 public:
    using std::runtime_error::runtime_error;
};

}  // namespace detail

FMT_BEGIN_EXPORT
template <typename T, typename Char = char, typename Enable = void>
struct formatter {
    formatter() = delete;
};

template <> struct formatter<int> : formatter<long> {
    FMT_CONSTEXPR auto parse(parse_context& ctx) -> const char* { return ctx.begin(); }
};

template <> struct formatter<bool> {
    auto format(bool b, format_context& ctx) const -> decltype(ctx.out()) {
        return detail::write(ctx.out(), b);
    }
};

FMT_API void vprint(string_view fmt, format_args args) {
    detail::vprint_impl(fmt, args);
}

FMT_INLINE void print(string_view fmt) { vprint(fmt, {}); }
FMT_END_EXPORT
FMT_END_NAMESPACE

#define FMT_STRING(s) FMT_STRING_IMPL(s, fmt::detail::compile_string, )
#define FMT_VERSION 110100
