package broken

import "fmt"

type Good struct{ N int }

func (g *Good) OK() string {
	return fmt.Sprint(g.N)
}

func Broken(x int {
	return helper(x)
}

func After() {
	fmt.Println("after")
	if x := compute(; x > 0 {
	}
}

type Tail interface {
	M(
