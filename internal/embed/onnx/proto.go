package onnx

import "google.golang.org/protobuf/encoding/protowire"

// The few fields of onnx.proto (ONNX IR) that the model inspector reads,
// with protowire. Field numbers are onnx.proto's; onnxtest writes models
// with the same numbers.
const (
	modelGraph       = 7 // ModelProto.graph
	graphNode        = 1 // GraphProto.node
	graphInitializer = 5
	nodeInput        = 1 // NodeProto
	nodeOpType       = 4
	tensorDims       = 1 // TensorProto
	tensorName       = 8
)

// fields calls fn for each field of the message b, stopping at the first
// error; malformed input is an error.
func fields(b []byte, fn func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		var v []byte
		var x uint64
		switch typ {
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if err := fn(num, typ, v, x); err != nil {
			return err
		}
	}
	return nil
}
