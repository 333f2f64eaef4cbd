package onnxtest

import (
	"encoding/binary"
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// The few messages of onnx.proto (ONNX IR) that the BERT writer needs,
// written with protowire. Field numbers are onnx.proto's.
const (
	modelIRVersion   = 1 // ModelProto.ir_version
	modelProducer    = 2 // ModelProto.producer_name
	modelGraph       = 7 // ModelProto.graph
	modelOpsetImport = 8 // ModelProto.opset_import
	opsetVersion     = 2 // OperatorSetIdProto.version
	graphNode        = 1 // GraphProto.node
	graphName        = 2
	graphInitializer = 5
	graphInput       = 11
	graphOutput      = 12
	nodeInput        = 1 // NodeProto
	nodeOutput       = 2
	nodeName         = 3
	nodeOpType       = 4
	nodeAttribute    = 5
	attrName         = 1 // AttributeProto
	attrF            = 2
	attrI            = 3
	attrInts         = 8
	attrType         = 20
	tensorDims       = 1 // TensorProto
	tensorDataType   = 2
	tensorName       = 8
	tensorRawData    = 9
	valueName        = 1 // ValueInfoProto
	valueType        = 2
	typeTensor       = 1 // TypeProto.tensor_type
	ttElemType       = 1 // TypeProto.Tensor
	ttShape          = 2
	shapeDim         = 1 // TensorShapeProto.dim
	dimValue         = 1 // TensorShapeProto.Dimension
	dimParam         = 2

	attrTypeFloat = 1 // AttributeProto.AttributeType
	attrTypeInt   = 2
	attrTypeInts  = 7

	elemFloat = 1 // TensorProto.DataType
	elemInt8  = 3
	elemInt64 = 7
)

// pb appends protobuf fields.
type pb []byte

func (b pb) bytes(num protowire.Number, v []byte) pb {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}
func (b pb) str(num protowire.Number, v string) pb { return b.bytes(num, []byte(v)) }
func (b pb) varint(num protowire.Number, v int64) pb {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, uint64(v))
}
func (b pb) float(num protowire.Number, v float32) pb {
	b = protowire.AppendTag(b, num, protowire.Fixed32Type)
	return protowire.AppendFixed32(b, math.Float32bits(v))
}

// attr is one node attribute: a float, an int or a list of ints.
type attr struct {
	name string
	f    *float32
	i    *int64
	ints []int64
}

func fattr(name string, v float32) attr { return attr{name: name, f: &v} }
func iattr(name string, v int64) attr   { return attr{name: name, i: &v} }
func intsAttr(name string, v ...int64) attr {
	return attr{name: name, ints: v}
}

func (a attr) encode() pb {
	b := pb(nil).str(attrName, a.name)
	switch {
	case a.f != nil:
		b = b.float(attrF, *a.f).varint(attrType, attrTypeFloat)
	case a.i != nil:
		b = b.varint(attrI, *a.i).varint(attrType, attrTypeInt)
	default:
		for _, v := range a.ints {
			b = b.varint(attrInts, v)
		}
		b = b.varint(attrType, attrTypeInts)
	}
	return b
}

// graphWriter collects a graph's nodes, initializers, inputs and outputs.
type graphWriter struct {
	nodes, inits, inputs, outputs []pb
	n                             int // names of intermediate values
}

// op adds a node and returns its output's name.
func (g *graphWriter) op(opType string, inputs []string, attrs ...attr) string {
	return g.opN(opType, inputs, 1, attrs...)[0]
}

// opN adds a node with n outputs and returns their names.
func (g *graphWriter) opN(opType string, inputs []string, n int, attrs ...attr) []string {
	g.n++
	name := fmt.Sprintf("%s_%d", opType, g.n)
	b := pb(nil)
	for _, in := range inputs {
		b = b.str(nodeInput, in)
	}
	var outs []string
	for i := 0; i < n; i++ {
		out := name
		if i > 0 {
			out = fmt.Sprintf("%s.%d", name, i)
		}
		outs = append(outs, out)
		b = b.str(nodeOutput, out)
	}
	b = b.str(nodeName, name).str(nodeOpType, opType)
	for _, a := range attrs {
		b = b.bytes(nodeAttribute, a.encode())
	}
	g.nodes = append(g.nodes, b)
	return outs
}

// floats adds a float initializer of the given shape.
func (g *graphWriter) floats(name string, data []float32, dims ...int64) string {
	raw := make([]byte, 4*len(data))
	for i, v := range data {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	g.init(name, elemFloat, raw, dims)
	return name
}

// int8s adds an int8 initializer of the given shape.
func (g *graphWriter) int8s(name string, data []int8, dims ...int64) string {
	raw := make([]byte, len(data))
	for i, v := range data {
		raw[i] = byte(v)
	}
	g.init(name, elemInt8, raw, dims)
	return name
}

// int64s adds an int64 initializer of the given shape.
func (g *graphWriter) int64s(name string, data []int64, dims ...int64) string {
	raw := make([]byte, 8*len(data))
	for i, v := range data {
		binary.LittleEndian.PutUint64(raw[8*i:], uint64(v))
	}
	g.init(name, elemInt64, raw, dims)
	return name
}

func (g *graphWriter) init(name string, elem int64, raw []byte, dims []int64) {
	b := pb(nil)
	for _, d := range dims {
		b = b.varint(tensorDims, d)
	}
	g.inits = append(g.inits, b.varint(tensorDataType, elem).str(tensorName, name).bytes(tensorRawData, raw))
}

// valueInfo describes a graph input or output; a dim is a number or, when
// negative, the symbolic dimension named in syms.
func valueInfo(name string, elem int64, dims []int64, syms []string) pb {
	shape := pb(nil)
	for i, d := range dims {
		if d < 0 {
			shape = shape.bytes(shapeDim, pb(nil).str(dimParam, syms[i]))
		} else {
			shape = shape.bytes(shapeDim, pb(nil).varint(dimValue, d))
		}
	}
	tt := pb(nil).varint(ttElemType, elem).bytes(ttShape, shape)
	return pb(nil).str(valueName, name).bytes(valueType, pb(nil).bytes(typeTensor, tt))
}

// model encodes the graph as a ModelProto (IR version 8, default opset).
func (g *graphWriter) model(name string, opset int64) []byte {
	gb := pb(nil)
	for _, n := range g.nodes {
		gb = gb.bytes(graphNode, n)
	}
	gb = gb.str(graphName, name)
	for _, t := range g.inits {
		gb = gb.bytes(graphInitializer, t)
	}
	for _, v := range g.inputs {
		gb = gb.bytes(graphInput, v)
	}
	for _, v := range g.outputs {
		gb = gb.bytes(graphOutput, v)
	}
	b := pb(nil).varint(modelIRVersion, 8).str(modelProducer, "locus tinybert")
	b = b.bytes(modelGraph, gb)
	b = b.bytes(modelOpsetImport, pb(nil).varint(opsetVersion, opset))
	return b
}
