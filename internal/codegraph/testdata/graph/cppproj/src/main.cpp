#include <iostream>
#include "geo/shape.h"

int main() {
  geo::Rect r(2, 3);
  r.scale(2.0);
  std::cout << geo::total(r, r) << r.describe() << std::endl;
  return 0;
}
