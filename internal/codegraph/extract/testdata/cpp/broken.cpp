#include "broken.hpp"

namespace app {

class Widget {
public:
    void draw() { paint(); }
    void resize(int w {
};

void Widget::show() {
    draw();
}

int unfinished(int x) {
    if (x) {
        return compute(
