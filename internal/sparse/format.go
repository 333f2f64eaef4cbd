package sparse

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"

	"github.com/klauspost/compress/zstd"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/objio"
	"github.com/locus-dev/locus/schema"
)

// File format, version 1. All integers little-endian.
//
//	offset  size  field
//	0       8     magic "LOCUSBM\x19"
//	8       2     format version (1)
//	10      2     tokenizer version (schema.TokenizerVersion)
//	12      4     flags, must be 0
//	16      8     k1 (IEEE 754 float64)
//	24      8     b  (IEEE 754 float64)
//	32      4     N, documents
//	36      4     T, terms
//	40      8     total document length, tokens
//	48      4     D, bytes of doc IDs
//	52      4     S, bytes of terms
//	56      4     P, bytes of postings
//	60      4     reserved, must be 0
//	64            sections, back to back:
//	              docOff   (N+1) × uint32   offsets into doc IDs; docOff[0] = 0, docOff[N] = D
//	              docLen   N × uint32       tokens per document
//	              docIDs   D bytes          doc IDs, concatenated, strictly increasing
//	              termOff  (T+1) × uint32   offsets into terms
//	              terms    S bytes          terms, concatenated, strictly increasing
//	              df       T × uint32       documents per term, 1..N
//	              postOff  (T+1) × uint32   offsets into postings
//	              postings P bytes          per term, per document in ordinal order:
//	                                        uvarint(delta<<1 | tf==1) [uvarint(tf) if tf != 1]
//	end-4   4     CRC-32C (Castagnoli) of every byte before it
//
// Why this shape: the tables are fixed-width so Load does no parsing beyond
// one pass to check them, and the dictionaries are sorted so lookups bisect
// them instead of filling a hash map; postings, the bulk of the file, stay
// varint-encoded and are decoded only for query terms at search time. Loading
// is thus a checksum, a few table copies and one log per term for IDF.
const (
	headerSize  = 64
	trailerSize = 4
)

var magic = [8]byte{'L', 'O', 'C', 'U', 'S', 'B', 'M', 0x19}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

var (
	// ErrCorrupt is wrapped by errors about a damaged or truncated index file;
	// it wraps blob.ErrCorrupt, so callers treat it as any damaged object
	// (rebuild, do not retry).
	ErrCorrupt = fmt.Errorf("corrupt sparse index: %w", blob.ErrCorrupt)
	// ErrVersion is wrapped by errors about an index written in a format or
	// with a tokenizer this build does not read; rebuild the index.
	ErrVersion = errors.New("unsupported sparse index version")
)

// Write stores ix under key in bucket, compressed with zstd (a stored
// index is a third of its size: sympy's 6.25 MB a snapshot became about
// 2 MB); the object appears atomically. Load reads such objects and the
// uncompressed ones written before.
func Write(ctx context.Context, bucket *blob.Bucket, key string, ix *Index) error {
	w, err := bucket.NewWriter(ctx, key)
	if err != nil {
		return fmt.Errorf("sparse: write %s: %w", key, err)
	}
	defer w.Abort()
	zw, err := zstd.NewWriter(w, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedDefault))
	if err != nil {
		return fmt.Errorf("sparse: write %s: %w", key, err)
	}
	bw := bufio.NewWriterSize(zw, 256<<10)
	if _, err := ix.WriteTo(bw); err != nil {
		return fmt.Errorf("sparse: write %s: %w", key, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("sparse: write %s: %w", key, err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("sparse: write %s: %w", key, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("sparse: write %s: %w", key, err)
	}
	return nil
}

// Load reads the index stored under key by Write. Damaged or truncated data
// yields an error wrapping ErrCorrupt, an unsupported format or tokenizer
// version one wrapping ErrVersion, a missing object one wrapping
// blob.ErrNotFound; each names the key.
func Load(ctx context.Context, bucket *blob.Bucket, key string) (*Index, error) {
	data, err := bucket.ReadAll(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("sparse: load %s: %w", key, err)
	}
	ix, err := decodeStored(data)
	if err != nil {
		return nil, fmt.Errorf("sparse: load %s: %w", key, err)
	}
	return ix, nil
}

// zstdMagic starts every zstd frame.
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

var zstdDecoder, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))

// decodeStored decodes a stored index: a zstd frame holding the format
// Decode reads (what Write stores), or that format bare (what it stored
// before). A damaged or truncated frame wraps ErrCorrupt.
func decodeStored(data []byte) (*Index, error) {
	if !bytes.HasPrefix(data, zstdMagic) {
		return Decode(data)
	}
	raw, err := zstdDecoder.DecodeAll(data, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: zstd: %v", ErrCorrupt, err)
	}
	return Decode(raw)
}

// Digest reads the index stored under key, checks that it decodes, and
// returns its size and hex SHA-256 for the manifest to record.
func Digest(ctx context.Context, bucket *blob.Bucket, key string) (int64, string, error) {
	data, err := bucket.ReadAll(ctx, key)
	if err != nil {
		return 0, "", fmt.Errorf("sparse: digest %s: %w", key, err)
	}
	if _, err := decodeStored(data); err != nil {
		return 0, "", fmt.Errorf("sparse: digest %s: %w", key, err)
	}
	ref := objio.RefOf(key, data)
	return ref.Size, ref.SHA256, nil
}

// LoadVerified is Load that also checks the size and hex SHA-256 recorded
// when the index was written (0 and "" skip the check, for manifests written
// before they were recorded): an index replaced by another one, valid in
// itself, is reported as blob.ErrCorrupt too (see objio.ReadBlob).
func LoadVerified(ctx context.Context, bucket *blob.Bucket, key string, size int64, sum string) (*Index, error) {
	data, err := objio.ReadBlob(ctx, bucket, objio.Ref{Key: key, Size: size, SHA256: sum})
	if err != nil {
		return nil, fmt.Errorf("sparse: load: %w", err)
	}
	ix, err := decodeStored(data)
	if err != nil {
		return nil, fmt.Errorf("sparse: load %s: %w", key, err)
	}
	return ix, nil
}

// Size is the number of bytes WriteTo writes.
func (ix *Index) Size() int64 {
	n, t := int64(ix.nDocs), int64(len(ix.df))
	return headerSize + (n+1)*4 + n*4 + int64(len(ix.docData)) +
		(t+1)*4 + int64(len(ix.termData)) + t*4 + (t+1)*4 + int64(len(ix.postings)) + trailerSize
}

// WriteTo writes ix in the format Load reads.
func (ix *Index) WriteTo(w io.Writer) (int64, error) {
	cw := &crcWriter{w: w}
	var h [headerSize]byte
	copy(h[0:8], magic[:])
	binary.LittleEndian.PutUint16(h[8:], schema.SparseIndexVersion)
	binary.LittleEndian.PutUint16(h[10:], schema.TokenizerVersion)
	binary.LittleEndian.PutUint64(h[16:], math.Float64bits(ix.cfg.K1))
	binary.LittleEndian.PutUint64(h[24:], math.Float64bits(ix.cfg.B))
	binary.LittleEndian.PutUint32(h[32:], uint32(ix.nDocs))
	binary.LittleEndian.PutUint32(h[36:], uint32(len(ix.df)))
	binary.LittleEndian.PutUint64(h[40:], ix.totalLen)
	binary.LittleEndian.PutUint32(h[48:], uint32(len(ix.docData)))
	binary.LittleEndian.PutUint32(h[52:], uint32(len(ix.termData)))
	binary.LittleEndian.PutUint32(h[56:], uint32(len(ix.postings)))
	cw.write(h[:])
	cw.u32s(ix.docOff)
	cw.u32s(ix.docLen)
	cw.str(ix.docData)
	cw.u32s(ix.termOff)
	cw.str(ix.termData)
	cw.u32s(ix.df)
	cw.u32s(ix.postOff)
	cw.write(ix.postings)
	var crc [4]byte
	binary.LittleEndian.PutUint32(crc[:], cw.crc)
	cw.write(crc[:])
	return cw.n, cw.err
}

type crcWriter struct {
	w   io.Writer
	crc uint32
	n   int64
	err error
	buf []byte
}

func (c *crcWriter) write(p []byte) {
	if c.err != nil {
		return
	}
	c.crc = crc32.Update(c.crc, castagnoli, p)
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
}

func (c *crcWriter) str(s string) {
	for len(s) > 0 && c.err == nil {
		k := min(len(s), 64<<10)
		c.buf = append(c.buf[:0], s[:k]...)
		c.write(c.buf)
		s = s[k:]
	}
}

func (c *crcWriter) u32s(v []uint32) {
	for len(v) > 0 && c.err == nil {
		k := min(len(v), 16<<10)
		c.buf = c.buf[:0]
		for _, x := range v[:k] {
			c.buf = binary.LittleEndian.AppendUint32(c.buf, x)
		}
		c.write(c.buf)
		v = v[k:]
	}
}

// Decode parses an index written by WriteTo. The index keeps referring to
// data's postings, so data must not be modified afterwards.
func Decode(data []byte) (*Index, error) {
	corrupt := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
	}
	if len(data) < 12 {
		return nil, corrupt("truncated: %d bytes, shorter than the %d-byte header", len(data), headerSize)
	}
	if [8]byte(data[:8]) != magic {
		return nil, corrupt("bad magic %q: not a sparse index", data[:8])
	}
	le := binary.LittleEndian
	if v := le.Uint16(data[8:]); v != schema.SparseIndexVersion {
		return nil, fmt.Errorf("%w: format version %d, this build reads %d", ErrVersion, v, schema.SparseIndexVersion)
	}
	if v := le.Uint16(data[10:]); v != schema.TokenizerVersion {
		return nil, fmt.Errorf("%w: built with tokenizer version %d, this build tokenizes queries with %d", ErrVersion, v, schema.TokenizerVersion)
	}
	if len(data) < headerSize+trailerSize {
		return nil, corrupt("truncated: %d bytes, shorter than header and checksum (%d)", len(data), headerSize+trailerSize)
	}
	nDocs := uint64(le.Uint32(data[32:]))
	nTerms := uint64(le.Uint32(data[36:]))
	totalLen := le.Uint64(data[40:])
	docBytes := uint64(le.Uint32(data[48:]))
	termBytes := uint64(le.Uint32(data[52:]))
	postBytes := uint64(le.Uint32(data[56:]))
	want := uint64(headerSize) + (nDocs+1)*4 + nDocs*4 + docBytes +
		(nTerms+1)*4 + termBytes + nTerms*4 + (nTerms+1)*4 + postBytes + trailerSize
	switch {
	case uint64(len(data)) < want:
		return nil, corrupt("truncated: %d bytes, header promises %d", len(data), want)
	case uint64(len(data)) > want:
		return nil, corrupt("%d trailing bytes after the %d the header promises", uint64(len(data))-want, want)
	}
	body := data[:len(data)-trailerSize]
	if got, sum := crc32.Checksum(body, castagnoli), le.Uint32(data[len(body):]); got != sum {
		return nil, corrupt("checksum mismatch: stored %08x, computed %08x", sum, got)
	}
	if f := le.Uint32(data[12:]); f != 0 {
		return nil, corrupt("unknown flags %#x", f)
	}
	if r := le.Uint32(data[60:]); r != 0 {
		return nil, corrupt("reserved header field is %#x, want 0", r)
	}
	cfg := Config{K1: math.Float64frombits(le.Uint64(data[16:])), B: math.Float64frombits(le.Uint64(data[24:]))}
	if err := cfg.Validate(); err != nil {
		return nil, corrupt("%v", err)
	}

	ix := &Index{cfg: cfg, nDocs: int(nDocs), totalLen: totalLen}
	p := body[headerSize:]
	take := func(n uint64) []byte {
		b := p[:n]
		p = p[n:]
		return b
	}
	var err error
	if ix.docOff, err = offsets(take((nDocs+1)*4), docBytes); err != nil {
		return nil, corrupt("doc id offsets: %v", err)
	}
	ix.docLen = u32s(take(nDocs * 4))
	ix.docData = string(take(docBytes))
	if ix.termOff, err = offsets(take((nTerms+1)*4), termBytes); err != nil {
		return nil, corrupt("term offsets: %v", err)
	}
	ix.termData = string(take(termBytes))
	ix.df = u32s(take(nTerms * 4))
	if ix.postOff, err = offsets(take((nTerms+1)*4), postBytes); err != nil {
		return nil, corrupt("postings offsets: %v", err)
	}
	ix.postings = take(postBytes)

	var sum uint64
	for _, l := range ix.docLen {
		sum += uint64(l)
	}
	if sum != totalLen {
		return nil, corrupt("document lengths add up to %d, header says %d", sum, totalLen)
	}
	for d := 1; d < ix.nDocs; d++ {
		if ix.docID(d-1) >= ix.docID(d) {
			return nil, corrupt("doc ids out of order at %d", d)
		}
	}
	if ix.nDocs > 0 && ix.docID(0) == "" {
		return nil, corrupt("empty doc id")
	}
	for t := range ix.df {
		if t > 0 && ix.term(t-1) >= ix.term(t) {
			return nil, corrupt("terms out of order at %d", t)
		}
		if df := uint64(ix.df[t]); df == 0 || df > nDocs {
			return nil, corrupt("term %q: document frequency %d outside 1..%d", ix.term(t), df, nDocs)
		}
		// Every posting takes at least one byte.
		if uint64(ix.postOff[t+1]-ix.postOff[t]) < uint64(ix.df[t]) {
			return nil, corrupt("term %q: %d postings in %d bytes", ix.term(t), ix.df[t], ix.postOff[t+1]-ix.postOff[t])
		}
	}
	ix.derive()
	return ix, nil
}

func u32s(b []byte) []uint32 {
	v := make([]uint32, len(b)/4)
	for i := range v {
		v[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return v
}

// offsets decodes an offset table and checks that it starts at 0, never
// decreases and ends at size.
func offsets(b []byte, size uint64) ([]uint32, error) {
	v := u32s(b)
	if v[0] != 0 {
		return nil, fmt.Errorf("first offset %d, want 0", v[0])
	}
	for i := 1; i < len(v); i++ {
		if v[i] < v[i-1] {
			return nil, fmt.Errorf("offset %d decreases (%d < %d)", i, v[i], v[i-1])
		}
	}
	if last := uint64(v[len(v)-1]); last != size {
		return nil, fmt.Errorf("last offset %d, want %d", last, size)
	}
	return v, nil
}
