#pragma once
#include <string>
#include "geo/point.hpp"

namespace geo {
namespace detail {
inline int clamp(int v) { return v < 0 ? 0 : v; }
}  // namespace detail

inline namespace v2 {
struct Version {
    int major;
};
}  // namespace v2

namespace {
int hidden() { return detail::clamp(1); }
}  // namespace

class Shape {
public:
    Shape();
    virtual ~Shape() = default;
    virtual double area() const = 0;
    virtual std::string name() const { return "shape"; }
    void move(int dx, int dy);
    Shape(const Shape&) = delete;

    struct Bounds {
        int w, h;
        bool empty() const { return w == 0 || h == 0; }
    };

protected:
    int x_ = 0;
};

class Circle : public Shape, private ns::Tracked<Circle> {
public:
    explicit Circle(double r) : r_(r) {}
    double area() const override { return 3.14 * r_ * r_; }
    bool operator==(const Circle& o) const { return r_ == o.r_; }
    bool operator<(const Circle& o) const;
    double operator()(double scale) const { return area() * scale; }
    int& operator[](size_t i) { return data_[i]; }
    explicit operator bool() const { return r_ > 0; }
    friend std::ostream& operator<<(std::ostream& os, const Circle& c) { return os << c.r_; }
    friend void swap(Circle& a, Circle& b);

    void scale(double f) { r_ *= f; }
    void scale(double fx, double fy = 1.0) { r_ *= fx * fy; }
    void scale(const std::vector<double> &factors, ...) {}

    const double& radius() const { return r_; }
    double& radius() { return r_; }

private:
    double r_;
    int data_[4];
};

template <typename T>
T max_of(const T& a, const T& b) {
    return a < b ? b : a;
}

template <typename T>
struct Box : Shape {
    T value;
    double area() const override { return 0; }
    template <typename U>
    Box<U> map(U (*fn)(const T&)) const { return Box<U>{fn(value)}; }
};

template <>
struct Box<int> {
    int value;
};

int area_sum(const Shape* a, const Shape* b);
int area_sum(const Shape* a, const Shape* b, const Shape* c);

}  // namespace geo

namespace geo::io {
void write(const Shape& s);
void write(const Shape& s) { s.name(); }
}
