#include "shapes.hpp"
#include <algorithm>

namespace geo {

Shape::Shape() : x_(0) { init(); }

void Shape::move(int dx, int dy) {
    x_ += dx;
    this->notify(dy);
    log::info("moved");
}

bool Circle::operator<(const Circle& o) const { return r_ < o.r_; }

void swap(Circle& a, Circle& b) { std::swap(a.r_, b.r_); }

}  // namespace geo

geo::Shape::Bounds bounds_of(const geo::Shape& s) { return {}; }

namespace geo {
namespace io {
class Writer {
public:
    ~Writer();
    void flush();
};
}  // namespace io
}  // namespace geo

geo::io::Writer::~Writer() { flush(); }

void geo::io::Writer::flush() {
    auto sink = std::make_unique<Sink>(1);
    auto* w = new Writer();
    auto* c = new geo::Circle(2.0);
    auto f = [&](int x) { return emit(x); };
    f(1);
    sink->write(std::move(*w));
    max_of<int>(1, 2);
    geo::detail::clamp(3);
    c->area();
    (*c).radius();
    delete w;
}

template <typename T>
void Box<T>::reset() { value = T(); }

int main() {
    geo::Circle c(1.0);
    return c.area() > 0;
}
