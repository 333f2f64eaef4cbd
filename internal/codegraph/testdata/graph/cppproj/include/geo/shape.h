#pragma once
#include <string>

namespace geo {

class Shape {
 public:
  virtual ~Shape() = default;
  virtual double area() const = 0;
  std::string describe() const;
};

class Rect : public Shape {
 public:
  Rect(double w, double h);
  double area() const override;
  double scale(double k);
  double scale(double kx, double ky);

 private:
  double w_, h_;
};

double total(const Shape& a, const Shape& b);

}  // namespace geo
