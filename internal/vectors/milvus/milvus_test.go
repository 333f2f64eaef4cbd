package milvus_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/milvus-io/milvus/pkg/v2/util/merr"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/locus-dev/locus/internal/vectors"
	"github.com/locus-dev/locus/internal/vectors/milvus"
	"github.com/locus-dev/locus/internal/vectors/milvus/milvustest"
	"github.com/locus-dev/locus/internal/vectors/vectortest"
)

const model = "BAAI/bge-test-4d"

func open(t *testing.T, o milvus.Options) *milvus.Index {
	t.Helper()
	if o.Model == "" && o.Collection == "" {
		o.Model = model
	}
	if o.Dim == 0 {
		o.Dim = vectortest.Dim
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ix, err := milvus.Open(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

func TestConformance(t *testing.T) {
	vectortest.Run(t, func(t *testing.T) vectors.Index {
		return open(t, milvus.Options{Address: milvustest.New(t).Addr()})
	})
}

// TestLive runs the suite against a real server.
func TestLive(t *testing.T) {
	addr := os.Getenv("LOCUS_TEST_MILVUS")
	if addr == "" {
		t.Skip("set LOCUS_TEST_MILVUS=host:19530 (and LOCUS_TEST_MILVUS_TOKEN=user:password if auth is on) to run against a live Milvus")
	}
	token := os.Getenv("LOCUS_TEST_MILVUS_TOKEN")
	ctx := context.Background()
	admin, err := milvusclient.New(ctx, &milvusclient.ClientConfig{Address: addr, APIKey: token})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close(ctx) })
	var n int
	var mu sync.Mutex
	fresh := func(t *testing.T) string {
		mu.Lock()
		n++
		name := fmt.Sprintf("locus_test_%d_%d", time.Now().UnixNano(), n)
		mu.Unlock()
		t.Cleanup(func() { admin.DropCollection(ctx, milvusclient.NewDropCollectionOption(name)) })
		return name
	}
	vectortest.Run(t, func(t *testing.T) vectors.Index {
		return open(t, milvus.Options{Address: addr, Token: token, Collection: fresh(t), Model: model})
	})
	t.Run("dimension of an existing collection", func(t *testing.T) {
		name := fresh(t)
		open(t, milvus.Options{Address: addr, Token: token, Collection: name, Model: model})
		_, err := milvus.Open(ctx, milvus.Options{Address: addr, Token: token, Collection: name, Model: model, Dim: 8})
		if !errors.Is(err, vectors.ErrDimension) {
			t.Errorf("reopen with dim 8: %v", err)
		}
	})
}

func TestOpenCreatesCollection(t *testing.T) {
	srv := milvustest.New(t)
	ix := open(t, milvus.Options{Address: srv.Addr()})
	name := milvus.CollectionName(model)
	if ix.Collection() != name {
		t.Errorf("collection %q, want %q", ix.Collection(), name)
	}
	sch, parts, cl, idx, loaded, ok := srv.Collection("default", name)
	if !ok {
		t.Fatalf("no collection %s on the server", name)
	}
	type field struct {
		typ               schemapb.DataType
		pk, auto, partKey bool
		params            string
	}
	got := map[string]field{}
	for _, f := range sch.GetFields() {
		var ps []string
		for _, p := range f.GetTypeParams() {
			ps = append(ps, p.GetKey()+"="+p.GetValue())
		}
		got[f.GetName()] = field{f.GetDataType(), f.GetIsPrimaryKey(), f.GetAutoID(), f.GetIsPartitionKey(), strings.Join(ps, ",")}
	}
	want := map[string]field{
		"pk":           {schemapb.DataType_Int64, true, false, false, ""},
		"repo":         {schemapb.DataType_VarChar, false, false, true, "max_length=512"},
		"node_id":      {schemapb.DataType_VarChar, false, false, false, "max_length=8192"},
		"commit":       {schemapb.DataType_VarChar, false, false, false, "max_length=128"},
		"content_hash": {schemapb.DataType_VarChar, false, false, false, "max_length=128"},
		"vector":       {schemapb.DataType_FloatVector, false, false, false, "dim=4"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("fields\n got %v\nwant %v", got, want)
	}
	if sch.GetEnableDynamicField() || !strings.Contains(sch.GetDescription(), model) {
		t.Errorf("dynamic %v, description %q", sch.GetEnableDynamicField(), sch.GetDescription())
	}
	if parts != milvus.DefaultNumPartitions || cl != commonpb.ConsistencyLevel_Strong || !loaded {
		t.Errorf("partitions %d, consistency %v, loaded %v", parts, cl, loaded)
	}
	params := map[string]string{}
	for _, p := range idx["vector"].GetParams() {
		params[p.GetKey()] = p.GetValue()
	}
	if !reflect.DeepEqual(params, map[string]string{"index_type": "HNSW", "metric_type": "COSINE", "M": "16", "efConstruction": "200"}) {
		t.Errorf("index params %v", params)
	}
	for m, n := range map[string]int{"Connect": 1, "CreateCollection": 1, "CreateIndex": 1, "LoadCollection": 1} {
		if got := srv.Calls(m); got != n {
			t.Errorf("%s called %d times, want %d", m, got, n)
		}
	}

	// A second process opening the same model finds everything in place.
	ctx := context.Background()
	if err := ix.Upsert(ctx, "acme/one", []vectors.Record{{NodeID: "a.py:f", ContentHash: "h", Commit: "c", Vector: []float32{1, 2, 3, 4}}}); err != nil {
		t.Fatal(err)
	}
	ix2 := open(t, milvus.Options{Address: srv.Addr()})
	if srv.Calls("CreateCollection") != 1 || srv.Calls("CreateIndex") != 1 {
		t.Errorf("reopen created again: %d collections, %d indexes", srv.Calls("CreateCollection"), srv.Calls("CreateIndex"))
	}
	if ids, err := ix2.IDs(ctx, "acme/one"); err != nil || !reflect.DeepEqual(ids, map[string]string{"a.py:f": "h"}) {
		t.Errorf("reopened ids %v %v", ids, err)
	}
}

func TestOpenChecksExistingCollection(t *testing.T) {
	srv := milvustest.New(t)
	ctx := context.Background()
	open(t, milvus.Options{Address: srv.Addr(), Collection: "shared", Model: "m1"})

	_, err := milvus.Open(ctx, milvus.Options{Address: srv.Addr(), Collection: "shared", Model: "m1", Dim: 8})
	if !errors.Is(err, vectors.ErrDimension) || !strings.Contains(err.Error(), "shared") {
		t.Errorf("other dimension: %v", err)
	}
	_, err = milvus.Open(ctx, milvus.Options{Address: srv.Addr(), Collection: "shared", Model: "m2", Dim: 4})
	if err == nil || !strings.Contains(err.Error(), `"m1"`) {
		t.Errorf("other model: %v", err)
	}

	// Collections locus did not make: another layout, another metric.
	c, err := milvusclient.New(ctx, &milvusclient.ClientConfig{Address: srv.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if err := c.CreateCollection(ctx, milvusclient.SimpleCreateCollectionOptions("quickstart", 4).WithAutoID(false).WithDynamicSchema(false)); err != nil {
		t.Fatal(err)
	}
	_, err = milvus.Open(ctx, milvus.Options{Address: srv.Addr(), Collection: "quickstart", Dim: 4})
	if err == nil || !strings.Contains(err.Error(), "not a locus collection") {
		t.Errorf("foreign layout: %v", err)
	}
	l2 := milvusclient.NewCreateCollectionOption("l2", entity.NewSchema().
		WithField(entity.NewField().WithName("pk").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("repo").WithDataType(entity.FieldTypeVarChar).WithMaxLength(512).WithIsPartitionKey(true)).
		WithField(entity.NewField().WithName("node_id").WithDataType(entity.FieldTypeVarChar).WithMaxLength(512)).
		WithField(entity.NewField().WithName("commit").WithDataType(entity.FieldTypeVarChar).WithMaxLength(64)).
		WithField(entity.NewField().WithName("content_hash").WithDataType(entity.FieldTypeVarChar).WithMaxLength(64)).
		WithField(entity.NewField().WithName("vector").WithDataType(entity.FieldTypeFloatVector).WithDim(4))).
		WithIndexOptions(milvusclient.NewCreateIndexOption("l2", "vector", index.NewHNSWIndex(entity.L2, 8, 64)))
	if err := c.CreateCollection(ctx, l2); err != nil {
		t.Fatal(err)
	}
	_, err = milvus.Open(ctx, milvus.Options{Address: srv.Addr(), Collection: "l2", Dim: 4})
	if err == nil || !strings.Contains(err.Error(), "COSINE") {
		t.Errorf("L2 index: %v", err)
	}
}

func TestOpenValidatesOptions(t *testing.T) {
	ctx := context.Background()
	for _, o := range []milvus.Options{
		{Dim: 4, Model: "m"},
		{Address: "localhost:19530", Model: "m"},
		{Address: "localhost:19530", Dim: 4},
		{Address: "localhost:19530", Dim: 4, Collection: "9lives"},
		{Address: "localhost:19530", Dim: 4, Collection: "has-dash"},
	} {
		if _, err := milvus.Open(ctx, o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	// Nothing listens: Open gives up after ConnectTimeout instead of hanging.
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	start := time.Now()
	_, err := milvus.Open(ctx, milvus.Options{Address: addr, Model: "m", Dim: 4, ConnectTimeout: 300 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), addr) || time.Since(start) > 5*time.Second {
		t.Errorf("unreachable server: %v after %v", err, time.Since(start))
	}
}

func TestCollectionName(t *testing.T) {
	for model, want := range map[string]string{
		"lexical_v1":                    "locus_lexical_v1",
		"BAAI/bge-small-en-v1.5":        "locus_BAAI_bge_small_en_v1_5_",
		"text-embedding-3-large":        "locus_text_embedding_3_large_",
		"Salesforce/SweRankEmbed-Small": "locus_Salesforce_SweRankEmbed_Small_",
	} {
		got := milvus.CollectionName(model)
		if !strings.HasPrefix(got, want) || (strings.HasSuffix(want, "_") && len(got) != len(want)+8) {
			t.Errorf("CollectionName(%q) = %q, want %q…", model, got, want)
		}
	}
	if milvus.CollectionName("a-b") == milvus.CollectionName("a.b") {
		t.Error("a-b and a.b share a collection")
	}
	long := milvus.CollectionName(strings.Repeat("x", 400))
	if len(long) > 255 {
		t.Errorf("%d characters", len(long))
	}
}

func record(i int) vectors.Record {
	return vectors.Record{NodeID: fmt.Sprintf("f%04d.py:x", i), ContentHash: fmt.Sprintf("h%d", i), Commit: "c1",
		Vector: []float32{float32(i%7) + 1, float32(i % 11), float32(i % 13), 1}}
}

func TestRequestsOnTheWire(t *testing.T) {
	srv := milvustest.New(t)
	ix := open(t, milvus.Options{Address: srv.Addr()})
	ctx := context.Background()
	var recs []vectors.Record
	var ids []string
	for i := 0; i < 2500; i++ {
		recs = append(recs, record(i))
		ids = append(ids, recs[i].NodeID)
	}
	if err := ix.Upsert(ctx, "acme/big", recs); err != nil {
		t.Fatal(err)
	}
	var rows []int
	for _, r := range srv.Requests("Upsert") {
		rows = append(rows, int(r.(*milvuspb.UpsertRequest).GetNumRows()))
	}
	if !reflect.DeepEqual(rows, []int{1000, 1000, 500}) {
		t.Errorf("upsert batches %v", rows)
	}

	got, err := ix.IDs(ctx, "acme/big")
	if err != nil || len(got) != 2500 || got["f0042.py:x"] != "h42" {
		t.Fatalf("%d ids, %v", len(got), err)
	}
	qs := srv.Requests("Query")
	if len(qs) < 3 {
		t.Errorf("%d query pages for 2500 rows", len(qs))
	}
	for i, q := range qs {
		q := q.(*milvuspb.QueryRequest)
		if q.GetConsistencyLevel() != commonpb.ConsistencyLevel_Strong || q.GetUseDefaultConsistency() {
			t.Errorf("query %d consistency %v", i, q.GetConsistencyLevel())
		}
		if !strings.Contains(q.GetExpr(), `repo == "acme/big"`) || i > 0 && !strings.Contains(q.GetExpr(), "pk >") {
			t.Errorf("query %d filter %q", i, q.GetExpr())
		}
	}

	if _, err := ix.Search(ctx, "acme/big", []float32{1, 0, 0, 0}, 5); err != nil {
		t.Fatal(err)
	}
	s := srv.Requests("Search")[0].(*milvuspb.SearchRequest)
	if s.GetDsl() != `repo == "acme/big"` || s.GetConsistencyLevel() != commonpb.ConsistencyLevel_Strong || !reflect.DeepEqual(s.GetOutputFields(), []string{"node_id"}) {
		t.Errorf("search request: filter %q, consistency %v, output %v", s.GetDsl(), s.GetConsistencyLevel(), s.GetOutputFields())
	}

	if err := ix.Delete(ctx, "acme/big", append(ids, ids[0], "no.such:id")); err != nil {
		t.Fatal(err)
	}
	ds := srv.Requests("Delete")
	if len(ds) != 3 || !strings.HasPrefix(ds[0].(*milvuspb.DeleteRequest).GetExpr(), "pk in [") {
		t.Errorf("%d delete requests", len(ds))
	}
	if n := srv.Rows("default", ix.Collection()); n != 0 {
		t.Errorf("%d rows left after deleting all", n)
	}

	// Large node ids cut a batch before BatchSize rows.
	small := open(t, milvus.Options{Address: srv.Addr(), BatchBytes: 64 << 10})
	before := srv.Calls("Upsert")
	var big []vectors.Record
	for i := 0; i < 40; i++ {
		r := record(i)
		r.NodeID = strings.Repeat("d/", 2000) + r.NodeID
		big = append(big, r)
	}
	if err := small.Upsert(ctx, "acme/deep", big); err != nil {
		t.Fatal(err)
	}
	if n := srv.Calls("Upsert") - before; n < 2 {
		t.Errorf("40 rows of 4 KB in %d batch(es) of at most 64 KB", n)
	}
}

func TestUpsertSameNodeTwice(t *testing.T) {
	srv := milvustest.New(t)
	ix := open(t, milvus.Options{Address: srv.Addr()})
	ctx := context.Background()
	a, b := record(1), record(1)
	b.ContentHash = "later"
	if err := ix.Upsert(ctx, "acme/one", []vectors.Record{a, record(2), b}); err != nil {
		t.Fatal(err)
	}
	got, _ := ix.IDs(ctx, "acme/one")
	if len(got) != 2 || got[a.NodeID] != "later" {
		t.Errorf("ids %v", got)
	}
}

func TestSearchTiesAcrossTheCut(t *testing.T) {
	srv := milvustest.New(t)
	ix := open(t, milvus.Options{Address: srv.Addr()})
	ctx := context.Background()
	var recs []vectors.Record
	for i := 0; i < 60; i++ {
		recs = append(recs, vectors.Record{NodeID: fmt.Sprintf("n%02d", i), Vector: []float32{1, 1, 0, 0}})
	}
	recs = append(recs, vectors.Record{NodeID: "zz.best", Vector: []float32{1, 0, 0, 0}})
	if err := ix.Upsert(ctx, "acme/ties", recs); err != nil {
		t.Fatal(err)
	}
	hits, err := ix.Search(ctx, "acme/ties", []float32{1, 0, 0, 0}, 5)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range hits {
		got = append(got, h.NodeID)
	}
	if want := []string{"zz.best", "n00", "n01", "n02", "n03"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v (the server orders ties by primary key)", got, want)
	}
	if math.Abs(hits[1].Score-1/math.Sqrt2) > 1e-6 {
		t.Errorf("cosine %v", hits[1].Score)
	}
	if n := srv.Calls("Search"); n < 2 {
		t.Errorf("%d search call(s): a tie across the cut needs a wider one", n)
	}

	if hits, err := ix.Search(ctx, "acme/ties", []float32{1, 0, 0, 0}, 0); err != nil || len(hits) != 0 {
		t.Errorf("k=0: %v %v", hits, err)
	}
	for _, k := range []int{-1, milvus.MaxTopK + 1} {
		if _, err := ix.Search(ctx, "acme/ties", []float32{1, 0, 0, 0}, k); err == nil {
			t.Errorf("k=%d accepted", k)
		}
	}
}

func TestBadInput(t *testing.T) {
	srv := milvustest.New(t)
	ix := open(t, milvus.Options{Address: srv.Addr()})
	ctx := context.Background()
	nan := record(1)
	nan.Vector[2] = float32(math.NaN())
	long := record(2)
	long.Commit = strings.Repeat("c", 200)
	for name, err := range map[string]error{
		"NaN":        ix.Upsert(ctx, "acme/one", []vectors.Record{record(0), nan}),
		"long":       ix.Upsert(ctx, "acme/one", []vectors.Record{long}),
		"repo":       ix.Upsert(ctx, "../etc", []vectors.Record{record(0)}),
		"search":     func() error { _, err := ix.Search(ctx, `a"b`, []float32{1, 0, 0, 0}, 1); return err }(),
		"delete":     ix.Delete(ctx, "", []string{"x"}),
		"ids":        func() error { _, err := ix.IDs(ctx, "a/b/c"); return err }(),
		"short pick": ix.Upsert(ctx, "acme/one", []vectors.Record{{NodeID: "x", Vector: []float32{1}}}),
	} {
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if srv.Calls("Upsert")+srv.Calls("Delete")+srv.Calls("Search")+srv.Calls("Query") != 0 {
		t.Error("bad input reached the server")
	}
}

func TestFailures(t *testing.T) {
	srv := milvustest.New(t)
	ix := open(t, milvus.Options{Address: srv.Addr()})
	ctx := context.Background()
	var recs []vectors.Record
	for i := 0; i < 2500; i++ {
		recs = append(recs, record(i))
	}

	// A node restarting: gRPC Unavailable is retried by the client.
	srv.Inject("Upsert", milvustest.Fault{Err: status.Error(codes.Unavailable, "proxy restarting")})
	if err := ix.Upsert(ctx, "acme/one", recs[:10]); err != nil {
		t.Fatalf("after one Unavailable: %v", err)
	}
	if n := srv.Calls("Upsert"); n != 2 {
		t.Errorf("%d upsert calls, want the failed one and its retry", n)
	}

	// A Milvus error status in the second batch: surfaces naming the input.
	before := srv.Calls("Upsert")
	srv.Inject("Upsert", milvustest.Fault{Skip: 1, Status: merr.Status(merr.WrapErrServiceDiskLimitExceeded(100, 90))})
	err := ix.Upsert(ctx, "acme/one", recs)
	if err == nil {
		t.Fatal("disk quota error swallowed")
	}
	for _, want := range []string{"acme/one", ix.Collection(), "records 1000-1999 of 2500", "disk"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if n := srv.Calls("Upsert") - before; n != 2 {
		t.Errorf("%d upsert calls after the failure, want 2", n)
	}

	srv.Inject("Search", milvustest.Fault{Err: status.Error(codes.Internal, "segment lost")})
	if _, err := ix.Search(ctx, "acme/one", []float32{1, 0, 0, 0}, 3); err == nil || !strings.Contains(err.Error(), "acme/one") || !strings.Contains(err.Error(), "segment lost") {
		t.Errorf("search: %v", err)
	}
	srv.Inject("Query", milvustest.Fault{Status: merr.Status(merr.WrapErrCollectionNotLoaded(ix.Collection()))})
	if _, err := ix.IDs(ctx, "acme/one"); err == nil || !strings.Contains(err.Error(), "not loaded") {
		t.Errorf("ids: %v", err)
	}
	srv.Inject("Delete", milvustest.Fault{Status: merr.Status(merr.WrapErrServiceRateLimit(10))})
	if err := ix.Delete(ctx, "acme/one", []string{"f0001.py:x"}); err == nil || !strings.Contains(err.Error(), "rate limit") {
		t.Errorf("delete: %v", err)
	}
	// Reads still work after the failures.
	if got, err := ix.IDs(ctx, "acme/one"); err != nil || len(got) != 1000 {
		t.Errorf("%d ids after a failed second batch, %v", len(got), err)
	}
}

func TestWaitsForIndexAndLoad(t *testing.T) {
	srv := milvustest.New(t)
	srv.SlowBuild(2, 2)
	open(t, milvus.Options{Address: srv.Addr()})
	if srv.Calls("DescribeIndex") < 3 || srv.Calls("GetLoadingProgress") < 3 {
		t.Errorf("polled the index %d and the load %d times", srv.Calls("DescribeIndex"), srv.Calls("GetLoadingProgress"))
	}
}

func TestConcurrentOpen(t *testing.T) {
	srv := milvustest.New(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ix, err := milvus.Open(context.Background(), milvus.Options{Address: srv.Addr(), Model: model, Dim: 4})
			if err == nil {
				ix.Close()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

func TestAuthAndDatabase(t *testing.T) {
	srv := milvustest.New(t)
	srv.RequireAuth(map[string]string{"locus": "s3cret"})
	ctx := context.Background()
	if _, err := milvus.Open(ctx, milvus.Options{Address: srv.Addr(), Model: model, Dim: 4}); err == nil {
		t.Error("opened without credentials")
	}
	open(t, milvus.Options{Address: srv.Addr(), Username: "locus", Password: "s3cret"})
	open(t, milvus.Options{Address: srv.Addr(), Token: "locus:s3cret"})

	if _, err := milvus.Open(ctx, milvus.Options{Address: srv.Addr(), Token: "locus:s3cret", DB: "vectors", Model: model, Dim: 4}); err == nil || !strings.Contains(err.Error(), "database") {
		t.Errorf("missing database: %v", err)
	}
	srv.AddDatabase("vectors")
	ix := open(t, milvus.Options{Address: srv.Addr(), Token: "locus:s3cret", DB: "vectors"})
	if err := ix.Upsert(ctx, "acme/one", []vectors.Record{record(1)}); err != nil {
		t.Fatal(err)
	}
	if srv.Rows("vectors", ix.Collection()) != 1 || srv.Rows("default", ix.Collection()) != 0 {
		t.Error("rows not in the vectors database")
	}
}
