// Package shapes exercises type declarations, methods and embedding.
package shapes

import (
	"fmt"
	"io"
	"math"

	"example.com/geo/pkg"
)

// Celsius is a named non-struct type.
type Celsius float64

// Shape is implemented by every figure.
type Shape interface {
	fmt.Stringer
	Area() float64
	Perimeter() (p float64)
}

type (
	// Point is a plain struct.
	Point struct {
		X, Y float64
	}

	// Circle embeds its centre and a pointer to a styled base.
	Circle struct {
		Point
		*pkg.Style `json:"style"`
		io.Writer
		List[Point]
		Radius float64
		meta   struct {
			Hidden // embedded into the anonymous struct, not into Circle
		}
	}

	Visitor func(Shape) error
)

// Number is a constraint: unions and ~T are type sets, comparable is embedded.
type Number interface {
	~int | ~float64
	comparable
}

// List is generic.
type List[T any] struct {
	items []T
}

// Vec is an alias, not a new type.
type Vec = Point

// ReadWriteShape embeds interfaces from two places.
type ReadWriteShape interface {
	Shape
	io.ReadWriter
	Close() error
}

func (c Circle) Area() float64 {
	return math.Pi * c.Radius * c.Radius
}

func (c *Circle) Perimeter() (p float64) {
	p = 2 * math.Pi * c.Radius
	return
}

func (c *Circle) String() string {
	return fmt.Sprintf("circle(%v, %v)", c.Point, c.Radius)
}

func (l *List[T]) Push(v T) {
	l.items = append(l.items, v)
}

func (List[T]) Len() int { return 0 }

func (p Point) Dist(q Point) float64 {
	return math.Hypot(q.X-p.X, q.Y-p.Y)
}

func (c Celsius) F() float64 { return float64(c)*9/5 + 32 }

// Sum is a generic function.
func Sum[T Number](xs ...T) (s T) {
	for _, x := range xs {
		s += x
	}
	return s
}
