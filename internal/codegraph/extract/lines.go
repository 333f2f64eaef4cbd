package extract

import "bytes"

// LineIndex holds the byte offset of each line's start.
type LineIndex []int

// NewLineIndex indexes the lines of src.
func NewLineIndex(src []byte) LineIndex {
	li := make(LineIndex, 1, len(src)/32+1)
	for i := 0; ; {
		j := bytes.IndexByte(src[i:], '\n')
		if j < 0 {
			return li
		}
		i += j + 1
		li = append(li, i)
	}
}

// Bounds are the [start, end) offsets of line k (0-based) of a text of n
// bytes, its newline left out.
func (li LineIndex) Bounds(k, n int) (start, end int) {
	if k+1 < len(li) {
		return li[k], li[k+1] - 1
	}
	return li[k], n
}
