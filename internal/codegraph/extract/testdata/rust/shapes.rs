//! A library-like file: types, traits and impls.
use std::fmt;

/// A point.
#[derive(Debug, Clone, Copy)]
pub struct Point {
    pub x: f64,
    pub y: f64,
}

pub struct Unit;

pub struct Meters(pub f64);

pub union Bits {
    i: u32,
    f: f32,
}

pub type Pair = (Point, Point);

pub enum Shape {
    Circle { center: Point, radius: f64 },
    Square(Point, f64),
    Empty,
}

pub trait Area: fmt::Debug + Clone {
    fn area(&self) -> f64;

    fn describe(&self) -> String {
        format!("area {}", self.area())
    }
}

pub trait Named<'a>: Sized + 'a + for<'b> Visit<'b> {
    const NAME: &'static str;
    type Output;
    fn name(&self) -> &'a str;
}

impl Point {
    pub const ORIGIN: Point = Point::new(0.0, 0.0);

    pub const fn new(x: f64, y: f64) -> Self {
        Point { x, y }
    }

    pub fn dist(&self, o: &Point) -> f64 {
        fn sq(v: f64) -> f64 {
            v * v
        }
        (sq(self.x - o.x) + sq(self.y - o.y)).sqrt()
    }
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({}, {})", self.x, self.y)
    }
}

impl fmt::LowerExp for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::LowerExp::fmt(&self.x, f)
    }
}

impl Area for Shape {
    fn area(&self) -> f64 {
        match self {
            Shape::Circle { radius, .. } => std::f64::consts::PI * radius * radius,
            Shape::Square(_, side) => side * side,
            Shape::Empty => 0.0,
        }
    }
}

pub struct Stack<T> {
    items: Vec<T>,
}

impl<T: Clone> Stack<T> {
    pub fn new() -> Self {
        Stack { items: Vec::new() }
    }

    pub fn push(&mut self, t: T) {
        self.items.push(t);
    }
}

impl<T> From<Vec<T>> for Stack<T> {
    fn from(items: Vec<T>) -> Self {
        Stack { items }
    }
}

impl<'a, T> IntoIterator for &'a geometry::Stack<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter()
    }
}

impl dyn Area {
    fn boxed_area(&self) -> f64 {
        self.area()
    }
}

impl Default for (Point, Point) {
    fn default() -> Self {
        (Point::ORIGIN, Point::ORIGIN)
    }
}

unsafe impl Send for Bits {}

extern "C" {
    fn abs(input: i32) -> i32;
}

pub fn r#try(s: &Shape) -> f64 {
    struct Cache {
        last: f64,
    }
    impl Cache {
        fn get(&self) -> f64 {
            self.last
        }
    }
    fn helper(s: &Shape) -> f64 {
        s.area()
    }
    let c = Cache { last: helper(s) };
    unsafe { abs(c.get() as i32) as f64 }
}

cfg_geometry! {
    pub fn gated() -> Point {
        Point::new(1.0, 1.0)
    }

    impl Shape {
        pub fn gated_center(&self) -> Option<Point> {
            None
        }
    }
}

thread_local! {
    static COUNTER: u32 = init_counter();
}
