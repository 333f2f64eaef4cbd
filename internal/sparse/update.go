package sparse

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"hash/fnv"

	"github.com/locus-dev/locus/internal/blob"
)

// NewBuilderFrom starts a Builder holding the documents of ix that keep
// accepts, with the token counts ix stored for them, so that documents whose
// text did not change are not tokenized again. Adding the other documents'
// texts and building gives the index, byte for byte, that a new Builder with
// ix's Config fed every text would (TestBuilderFromEqualsRebuild): terms
// found only in dropped documents are gone, N, lengths and document
// frequencies are recounted.
func NewBuilderFrom(ix *Index, keep func(docID string) bool) (*Builder, error) {
	b := NewBuilder(ix.cfg)
	slot := make([]int32, ix.nDocs) // ordinal in ix → index in b.docs, or -1
	for d := range ix.nDocs {
		id := ix.docID(d)
		if !keep(id) {
			slot[d] = -1
			continue
		}
		slot[d] = int32(len(b.docs))
		b.ids[id] = struct{}{}
		b.docs = append(b.docs, builderDoc{id: id, len: ix.docLen[d]})
	}
	for t := range ix.df {
		tid := uint32(0)
		seen := false
		err := ix.postingsOf(t, func(doc, tf uint32) {
			k := slot[doc]
			if k < 0 {
				return
			}
			if !seen {
				// Terms get builder ids in ix's term order, so every
				// document's terms stay sorted by id, as Add leaves them.
				seen, tid = true, uint32(len(b.terms))
				term := ix.term(t)
				b.termIDs[term] = tid
				b.terms = append(b.terms, term)
				b.df = append(b.df, 0)
			}
			b.docs[k].terms = append(b.docs[k].terms, termFreq{tid, tf})
			b.df[tid]++
		})
		if err != nil {
			return nil, err
		}
	}
	return b, nil
}

// postingsOf calls f for each (doc ordinal, term frequency) of term t, in
// doc order; postings that do not decode are an ErrCorrupt error.
func (ix *Index) postingsOf(t int, f func(doc, tf uint32)) error {
	p := ix.postings[ix.postOff[t]:ix.postOff[t+1]]
	doc := uint64(0)
	for range ix.df[t] {
		v, n := binary.Uvarint(p)
		if n <= 0 {
			return fmt.Errorf("%w: term %q: postings do not decode", ErrCorrupt, ix.term(t))
		}
		p = p[n:]
		doc += v >> 1
		tf := uint64(1)
		if v&1 == 0 {
			if tf, n = binary.Uvarint(p); n <= 0 || tf == 0 || tf > 1<<32-1 {
				return fmt.Errorf("%w: term %q: bad term frequency", ErrCorrupt, ix.term(t))
			}
			p = p[n:]
		}
		if doc >= uint64(ix.nDocs) {
			return fmt.Errorf("%w: term %q: document %d of %d", ErrCorrupt, ix.term(t), doc, ix.nDocs)
		}
		f(uint32(doc), uint32(tf))
	}
	return nil
}

// DocHash is the 64-bit FNV-1a hash of a document's text: what
// WriteDocHashes records to tell an unchanged document.
func DocHash(text string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(text))
	return h.Sum64()
}

// Doc-hash file, beside an index: magic "LOCUSBMH", uint32 N, uint32
// CRC-32C of the index's doc IDs (concatenated), N × uint64 hashes in doc-ID
// order, CRC-32C of every byte before it; little-endian.
var docHashMagic = [8]byte{'L', 'O', 'C', 'U', 'S', 'B', 'M', 'H'}

// WriteDocHashes stores the hash of every document of ix (hash(docID))
// under key, tied to ix's doc IDs: ReadDocHashes refuses it for another
// index.
func WriteDocHashes(ctx context.Context, bucket *blob.Bucket, key string, ix *Index, hash func(docID string) uint64) error {
	buf := make([]byte, 0, 16+8*ix.nDocs+4)
	buf = append(buf, docHashMagic[:]...)
	buf = binary.LittleEndian.AppendUint32(buf, uint32(ix.nDocs))
	buf = binary.LittleEndian.AppendUint32(buf, crc32.Checksum([]byte(ix.docData), castagnoli))
	for d := range ix.nDocs {
		buf = binary.LittleEndian.AppendUint64(buf, hash(ix.docID(d)))
	}
	buf = binary.LittleEndian.AppendUint32(buf, crc32.Checksum(buf, castagnoli))
	if err := bucket.WriteAll(ctx, key, buf); err != nil {
		return fmt.Errorf("sparse: write doc hashes %s: %w", key, err)
	}
	return nil
}

// ReadDocHashes reads what WriteDocHashes stored for ix under key, by doc
// ID. A damaged file, or one written for another index, is an ErrCorrupt
// error naming key.
func ReadDocHashes(ctx context.Context, bucket *blob.Bucket, key string, ix *Index) (map[string]uint64, error) {
	data, err := bucket.ReadAll(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("sparse: read doc hashes %s: %w", key, err)
	}
	bad := func(why string) error {
		return fmt.Errorf("sparse: read doc hashes %s: %w: %s", key, ErrCorrupt, why)
	}
	le := binary.LittleEndian
	if len(data) < 20 || [8]byte(data[:8]) != docHashMagic {
		return nil, bad("not a doc-hash file")
	}
	body := data[:len(data)-4]
	if crc32.Checksum(body, castagnoli) != le.Uint32(data[len(body):]) {
		return nil, bad("checksum mismatch")
	}
	n := int(le.Uint32(data[8:]))
	if n != ix.nDocs || len(body) != 16+8*n || le.Uint32(data[12:]) != crc32.Checksum([]byte(ix.docData), castagnoli) {
		return nil, bad("written for another index")
	}
	out := make(map[string]uint64, n)
	for d := range n {
		out[ix.docID(d)] = le.Uint64(data[16+8*d:])
	}
	return out, nil
}
