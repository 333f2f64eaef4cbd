#include "geo/shape.h"

namespace geo {

std::string Shape::describe() const {
  return "area " + std::to_string(area());
}

Rect::Rect(double w, double h) : w_(w), h_(h) {}

double Rect::area() const { return w_ * h_; }

double Rect::scale(double k) { return scale(k, k); }

double Rect::scale(double kx, double ky) {
  w_ *= kx;
  h_ *= ky;
  return area();
}

double total(const Shape& a, const Shape& b) { return a.area() + b.area(); }

}  // namespace geo
