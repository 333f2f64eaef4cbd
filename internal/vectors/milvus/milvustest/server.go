// Package milvustest is an in-process Milvus server for tests: it speaks the real gRPC protocol for the calls locus makes, keeps collections in memory, and can inject failures.
package milvustest

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/milvus-io/milvus/pkg/v2/util/merr"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// Limits the fake enforces the way a default-configured Milvus 2.6 does.
const (
	MaxTopK          = 16384 // quotaAndLimits.limits.topK
	MaxQueryWindow   = 16384 // quotaAndLimits.limits.maxQueryResultWindow
	MaxPartitions    = 1024  // rootCoord.maxPartitionNum
	DefaultPartNum   = 16    // default partitions of a partition-key collection
	MaxVarCharLength = 65535
	Version          = "v2.6.2"
)

// Server is the fake; safe for concurrent use.
type Server struct {
	milvuspb.UnimplementedMilvusServiceServer

	users                 map[string]string
	indexPolls, loadPolls int

	addr string
	grpc *grpc.Server

	mu     sync.Mutex
	dbs    map[string]map[string]*collection // db → name → collection
	nextID int64
	calls  map[string]int
	faults map[string][]fault
	reqs   map[string][]proto.Message
}

type fault struct {
	pass   bool
	err    error
	status *commonpb.Status
}

type collection struct {
	id          int64
	db, name    string
	schema      *schemapb.CollectionSchema
	fields      map[string]*schemapb.FieldSchema
	pk          *schemapb.FieldSchema
	consistency commonpb.ConsistencyLevel
	shards      int32
	partitions  int64
	props       []*commonpb.KeyValuePair
	created     uint64
	indexes     map[string]*index // by field name
	loaded      bool
	loadPolls   int
	rows        map[int64]row
}

type index struct {
	desc  *milvuspb.IndexDescription
	polls int
}

// row holds one entity: int64 and string scalars, []float32 vectors.
type row map[string]any

// New starts a fake on a 127.0.0.1 port, stopped when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{
		dbs:    map[string]map[string]*collection{"default": {}},
		nextID: 450000000000000000,
		calls:  map[string]int{},
		faults: map[string][]fault{},
		reqs:   map[string][]proto.Message{},
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("milvustest: listen: %v", err)
	}
	s.addr = lis.Addr().String()
	s.grpc = grpc.NewServer(grpc.ChainUnaryInterceptor(s.intercept))
	milvuspb.RegisterMilvusServiceServer(s.grpc, s)
	go s.grpc.Serve(lis)
	t.Cleanup(s.grpc.Stop)
	return s
}

// Addr is the server's "host:port".
func (s *Server) Addr() string { return s.addr }

// RequireAuth turns authentication on: users maps user → password.
func (s *Server) RequireAuth(users map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users = users
}

// SlowBuild makes indexes created from now on report InProgress to the
// first indexPolls DescribeIndex calls, and loads report 50% to the first
// loadPolls GetLoadingProgress calls, so clients have to wait.
func (s *Server) SlowBuild(indexPolls, loadPolls int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.indexPolls, s.loadPolls = indexPolls, loadPolls
}

// AddDatabase makes a database other than "default" exist.
func (s *Server) AddDatabase(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dbs[name] == nil {
		s.dbs[name] = map[string]*collection{}
	}
}

// Fault is a failure injected into the calls of one method.
type Fault struct {
	Skip  int // calls let through before the failures start
	Times int // calls that fail; default 1
	// Err, a gRPC status error such as status.Error(codes.Unavailable, "…"),
	// fails the call at the transport level; otherwise Status is the Milvus
	// status of an otherwise empty response, the way a server reports rate
	// limits, quotas and most other errors. Failed calls change nothing.
	Err    error
	Status *commonpb.Status
}

// Inject queues f for method (e.g. "Upsert"), after any fault queued before.
func (s *Server) Inject(method string, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f.Times <= 0 {
		f.Times = 1
	}
	for i := 0; i < f.Skip; i++ {
		s.faults[method] = append(s.faults[method], fault{pass: true})
	}
	for i := 0; i < f.Times; i++ {
		s.faults[method] = append(s.faults[method], fault{err: f.Err, status: f.Status})
	}
}

// Calls is how many times method was called, failed calls included.
func (s *Server) Calls(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[method]
}

// Requests are the requests method received, in order (clones).
func (s *Server) Requests(method string) []proto.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]proto.Message(nil), s.reqs[method]...)
}

// Collection describes a stored collection for assertions: its schema,
// partition count, consistency level and the index of each field.
func (s *Server) Collection(db, name string) (sch *schemapb.CollectionSchema, partitions int64, cl commonpb.ConsistencyLevel, indexes map[string]*milvuspb.IndexDescription, loaded bool, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.dbs[db][name]
	if c == nil {
		return nil, 0, 0, nil, false, false
	}
	indexes = map[string]*milvuspb.IndexDescription{}
	for f, ix := range c.indexes {
		indexes[f] = proto.Clone(ix.desc).(*milvuspb.IndexDescription)
	}
	return proto.Clone(c.schema).(*schemapb.CollectionSchema), c.partitions, c.consistency, indexes, c.loaded, true
}

// Rows is the number of entities stored in a collection.
func (s *Server) Rows(db, name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.dbs[db][name]; c != nil {
		return len(c.rows)
	}
	return 0
}

// DropCollection removes a collection, as another client might.
func (s *Server) DropCollection(ctx context.Context, req *milvuspb.DropCollectionRequest) (*commonpb.Status, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	db, err := s.db(ctx, req.GetDbName())
	if err != nil {
		return merr.Status(err), nil
	}
	delete(db, req.GetCollectionName())
	return merr.Success(), nil
}

func methodName(full string) string { return full[strings.LastIndexByte(full, '/')+1:] }

func (s *Server) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	name := methodName(info.FullMethod)
	s.mu.Lock()
	s.calls[name]++
	if m, ok := req.(proto.Message); ok {
		s.reqs[name] = append(s.reqs[name], proto.Clone(m))
	}
	users := s.users
	var f *fault
	if q := s.faults[name]; len(q) > 0 {
		f, s.faults[name] = &q[0], q[1:]
	}
	s.mu.Unlock()
	if len(users) > 0 {
		if err := checkAuth(ctx, users); err != nil {
			return nil, err
		}
	}
	if f != nil && !f.pass {
		if f.err != nil {
			return nil, f.err
		}
		return responseWithStatus(info.FullMethod, f.status)
	}
	return h(ctx, req)
}

// checkAuth accepts the "authorization" header Milvus clients send:
// base64("user:password") (an API key "user:password" encodes the same).
func checkAuth(ctx context.Context, users map[string]string) error {
	md, _ := metadata.FromIncomingContext(ctx)
	for _, v := range md.Get("authorization") {
		raw, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			continue
		}
		user, pass, ok := strings.Cut(string(raw), ":")
		if want, known := users[user]; ok && known && want == pass {
			return nil
		}
	}
	return status.Error(codes.Unauthenticated, "auth check failure, please check username and password are correct")
}

// responseWithStatus builds the method's response message carrying st.
func responseWithStatus(fullMethod string, st *commonpb.Status) (any, error) {
	parts := strings.Split(strings.TrimPrefix(fullMethod, "/"), "/")
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(parts[0]))
	if err != nil {
		return nil, status.Errorf(codes.Internal, "milvustest: %v", err)
	}
	m := d.(protoreflect.ServiceDescriptor).Methods().ByName(protoreflect.Name(parts[1]))
	mt, err := protoregistry.GlobalTypes.FindMessageByName(m.Output().FullName())
	if err != nil {
		return nil, status.Errorf(codes.Internal, "milvustest: %v", err)
	}
	resp := mt.New()
	if resp.Descriptor().FullName() == (&commonpb.Status{}).ProtoReflect().Descriptor().FullName() {
		return proto.Clone(st), nil
	}
	fd := resp.Descriptor().Fields().ByName("status")
	resp.Set(fd, protoreflect.ValueOfMessage(proto.Clone(st).ProtoReflect()))
	return resp.Interface(), nil
}

// db resolves the request's database: the field, else the "dbname" header.
func (s *Server) db(ctx context.Context, name string) (map[string]*collection, error) {
	if name == "" {
		md, _ := metadata.FromIncomingContext(ctx)
		if v := md.Get("dbname"); len(v) > 0 {
			name = v[0]
		}
	}
	if name == "" {
		name = "default"
	}
	db := s.dbs[name]
	if db == nil {
		return nil, merr.WrapErrDatabaseNotFound(name)
	}
	return db, nil
}

func (s *Server) coll(ctx context.Context, dbName, name string) (*collection, error) {
	db, err := s.db(ctx, dbName)
	if err != nil {
		return nil, err
	}
	c := db[name]
	if c == nil {
		return nil, merr.WrapErrCollectionNotFound(name)
	}
	return c, nil
}

// Connect implements MilvusService.
func (s *Server) Connect(ctx context.Context, req *milvuspb.ConnectRequest) (*milvuspb.ConnectResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.db(ctx, ""); err != nil {
		return &milvuspb.ConnectResponse{Status: merr.Status(err)}, nil
	}
	s.nextID++
	return &milvuspb.ConnectResponse{
		Status:     merr.Success(),
		ServerInfo: &commonpb.ServerInfo{BuildTags: Version + " (locus milvustest)", Reserved: map[string]string{}},
		Identifier: s.nextID,
	}, nil
}

// GetVersion implements MilvusService.
func (s *Server) GetVersion(context.Context, *milvuspb.GetVersionRequest) (*milvuspb.GetVersionResponse, error) {
	return &milvuspb.GetVersionResponse{Status: merr.Success(), Version: Version}, nil
}

// HasCollection implements MilvusService.
func (s *Server) HasCollection(ctx context.Context, req *milvuspb.HasCollectionRequest) (*milvuspb.BoolResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	db, err := s.db(ctx, req.GetDbName())
	if err != nil {
		return &milvuspb.BoolResponse{Status: merr.Status(err)}, nil
	}
	return &milvuspb.BoolResponse{Status: merr.Success(), Value: db[req.GetCollectionName()] != nil}, nil
}

func validCollectionName(name string) error {
	if name == "" || len(name) > 255 {
		return merr.WrapErrParameterInvalidMsg("the length of a collection name must be between 1 and 255 characters")
	}
	for i, r := range name {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return merr.WrapErrParameterInvalidMsg("Invalid collection name: %s. collection name can only contain numbers, letters and underscores, and the first character must be an underscore or a letter", name)
		}
	}
	return nil
}

func kv(pairs []*commonpb.KeyValuePair) map[string]string {
	m := map[string]string{}
	for _, p := range pairs {
		m[p.GetKey()] = p.GetValue()
	}
	return m
}

func fieldDim(f *schemapb.FieldSchema) int {
	d, _ := strconv.Atoi(kv(f.GetTypeParams())["dim"])
	return d
}

func fieldMaxLen(f *schemapb.FieldSchema) int {
	d, _ := strconv.Atoi(kv(f.GetTypeParams())["max_length"])
	return d
}

// CreateCollection implements MilvusService. Creating a collection that
// exists with the same schema succeeds, as on a server; with another it fails.
func (s *Server) CreateCollection(ctx context.Context, req *milvuspb.CreateCollectionRequest) (*commonpb.Status, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	db, err := s.db(ctx, req.GetDbName())
	if err != nil {
		return merr.Status(err), nil
	}
	name := req.GetCollectionName()
	if err := validCollectionName(name); err != nil {
		return merr.Status(err), nil
	}
	sch := &schemapb.CollectionSchema{}
	if err := proto.Unmarshal(req.GetSchema(), sch); err != nil {
		return merr.Status(merr.WrapErrParameterInvalidMsg("unmarshal schema: %v", err)), nil
	}
	if sch.GetName() != name {
		return merr.Status(merr.WrapErrParameterInvalidMsg("collection name [%s] does not match schema name [%s]", name, sch.GetName())), nil
	}
	c := &collection{db: req.GetDbName(), name: name, schema: sch, fields: map[string]*schemapb.FieldSchema{},
		consistency: req.GetConsistencyLevel(), shards: req.GetShardsNum(), props: req.GetProperties(),
		indexes: map[string]*index{}, rows: map[int64]row{}}
	var partKey *schemapb.FieldSchema
	for i, f := range sch.GetFields() {
		if c.fields[f.GetName()] != nil {
			return merr.Status(merr.WrapErrParameterInvalidMsg("duplicated field name %s", f.GetName())), nil
		}
		f.FieldID = int64(100 + i)
		c.fields[f.GetName()] = f
		switch f.GetDataType() {
		case schemapb.DataType_Int64:
		case schemapb.DataType_VarChar:
			if n := fieldMaxLen(f); n <= 0 || n > MaxVarCharLength {
				return merr.Status(merr.WrapErrParameterInvalidMsg("the maximum length specified for the field(%s) should be in (0, %d], but got %d instead", f.GetName(), MaxVarCharLength, n)), nil
			}
		case schemapb.DataType_FloatVector:
			if d := fieldDim(f); d <= 0 || d > 32768 {
				return merr.Status(merr.WrapErrParameterInvalidMsg("invalid dimension: %d of field %s. should be in range 2 ~ 32768", d, f.GetName())), nil
			}
		default:
			return merr.Status(merr.WrapErrParameterInvalidMsg("milvustest supports INT64, VARCHAR and FLOAT_VECTOR fields, not %v (%s)", f.GetDataType(), f.GetName())), nil
		}
		if f.GetIsPrimaryKey() {
			if c.pk != nil {
				return merr.Status(merr.WrapErrParameterInvalidMsg("there are more than one primary key, field name = %s, %s", c.pk.GetName(), f.GetName())), nil
			}
			if f.GetDataType() != schemapb.DataType_Int64 {
				return merr.Status(merr.WrapErrParameterInvalidMsg("milvustest supports INT64 primary keys only")), nil
			}
			c.pk = f
		}
		if f.GetIsPartitionKey() {
			if partKey != nil {
				return merr.Status(merr.WrapErrParameterInvalidMsg("there are more than one partition key, field name = %s, %s", partKey.GetName(), f.GetName())), nil
			}
			if f.GetIsPrimaryKey() || f.GetDataType() != schemapb.DataType_Int64 && f.GetDataType() != schemapb.DataType_VarChar {
				return merr.Status(merr.WrapErrParameterInvalidMsg("the data type of partition key should be Int64 or VarChar and not the primary key")), nil
			}
			partKey = f
		}
	}
	if c.pk == nil {
		return merr.Status(merr.WrapErrParameterInvalidMsg("primary key is not specified")), nil
	}
	if partKey != nil {
		c.partitions = req.GetNumPartitions()
		if c.partitions == 0 {
			c.partitions = DefaultPartNum
		}
		if c.partitions < 0 || c.partitions > MaxPartitions {
			return merr.Status(merr.WrapErrParameterInvalidMsg("partition number (%d) exceeds max configuration (%d)", c.partitions, MaxPartitions)), nil
		}
	} else if req.GetNumPartitions() > 0 {
		return merr.Status(merr.WrapErrParameterInvalidMsg("num_partitions should only be specified with partition key field enabled")), nil
	}
	if old := db[name]; old != nil {
		if proto.Equal(old.schema, sch) && old.partitions == c.partitions {
			return merr.Success(), nil
		}
		return merr.Status(merr.WrapErrParameterInvalidMsg("create duplicate collection with different parameters, collection: %s", name)), nil
	}
	s.nextID++
	c.id = s.nextID
	c.created = uint64(time.Now().UnixMilli()) << 18
	db[name] = c
	return merr.Success(), nil
}

// DescribeCollection implements MilvusService.
func (s *Server) DescribeCollection(ctx context.Context, req *milvuspb.DescribeCollectionRequest) (*milvuspb.DescribeCollectionResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.coll(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return &milvuspb.DescribeCollectionResponse{Status: merr.Status(err)}, nil
	}
	return &milvuspb.DescribeCollectionResponse{
		Status:               merr.Success(),
		Schema:               proto.Clone(c.schema).(*schemapb.CollectionSchema),
		CollectionID:         c.id,
		VirtualChannelNames:  []string{fmt.Sprintf("by-dev-rootcoord-dml_0_%dv0", c.id)},
		PhysicalChannelNames: []string{"by-dev-rootcoord-dml_0"},
		CreatedTimestamp:     c.created,
		ShardsNum:            c.shards,
		ConsistencyLevel:     c.consistency,
		CollectionName:       c.name,
		Properties:           c.props,
		DbName:               c.db,
		NumPartitions:        c.partitions,
		UpdateTimestamp:      c.created,
	}, nil
}

var metrics = map[string]bool{"COSINE": true, "L2": true, "IP": true}

// CreateIndex implements MilvusService for vector fields: FLAT, HNSW,
// IVF_FLAT and AUTOINDEX with COSINE, L2 or IP. One index per field; creating the same
// one again succeeds.
func (s *Server) CreateIndex(ctx context.Context, req *milvuspb.CreateIndexRequest) (*commonpb.Status, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.coll(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return merr.Status(err), nil
	}
	f := c.fields[req.GetFieldName()]
	if f == nil {
		return merr.Status(merr.WrapErrParameterInvalidMsg("cannot create index on non-exist field: %s", req.GetFieldName())), nil
	}
	if f.GetDataType() != schemapb.DataType_FloatVector {
		return merr.Status(merr.WrapErrParameterInvalidMsg("milvustest indexes FLOAT_VECTOR fields only, not %s", f.GetName())), nil
	}
	p := kv(req.GetExtraParams())
	if js, ok := p["params"]; ok {
		var extra map[string]any
		if err := json.Unmarshal([]byte(js), &extra); err != nil {
			return merr.Status(merr.WrapErrParameterInvalidMsg("index params: %v", err)), nil
		}
		delete(p, "params")
		for k, v := range extra {
			p[k] = fmt.Sprint(v)
		}
	}
	// As on a server: no index type means AUTOINDEX, no metric COSINE.
	if p["index_type"] == "" {
		p["index_type"] = "AUTOINDEX"
	}
	if p["metric_type"] == "" {
		p["metric_type"] = "COSINE"
	}
	if !metrics[p["metric_type"]] {
		return merr.Status(merr.WrapErrParameterInvalidMsg("metric type %q not found or not supported, supported: [COSINE L2 IP]", p["metric_type"])), nil
	}
	switch p["index_type"] {
	case "HNSW":
		m, err1 := strconv.Atoi(p["M"])
		ef, err2 := strconv.Atoi(p["efConstruction"])
		if err1 != nil || m < 2 || m > 2048 {
			return merr.Status(merr.WrapErrParameterInvalidMsg("param 'M' (%s) should be in range [2, 2048]", p["M"])), nil
		}
		if err2 != nil || ef < 1 {
			return merr.Status(merr.WrapErrParameterInvalidMsg("param 'efConstruction' (%s) should be in range [1, 2147483647]", p["efConstruction"])), nil
		}
	case "FLAT", "IVF_FLAT", "AUTOINDEX":
	default:
		return merr.Status(merr.WrapErrParameterInvalidMsg("invalid index type: %s", p["index_type"])), nil
	}
	name := req.GetIndexName()
	if name == "" {
		name = f.GetName()
	}
	params := make([]*commonpb.KeyValuePair, 0, len(p))
	for k, v := range p {
		params = append(params, &commonpb.KeyValuePair{Key: k, Value: v})
	}
	sort.Slice(params, func(i, j int) bool { return params[i].Key < params[j].Key })
	if old := c.indexes[f.GetName()]; old != nil {
		if old.desc.GetIndexName() == name && proto.Equal(&milvuspb.IndexDescription{Params: old.desc.GetParams()}, &milvuspb.IndexDescription{Params: params}) {
			return merr.Success(), nil
		}
		return merr.Status(merr.WrapErrParameterInvalidMsg("at most one distinct index is allowed per field")), nil
	}
	s.nextID++
	c.indexes[f.GetName()] = &index{
		desc:  &milvuspb.IndexDescription{IndexName: name, IndexID: s.nextID, Params: params, FieldName: f.GetName()},
		polls: s.indexPolls,
	}
	return merr.Success(), nil
}

// DescribeIndex implements MilvusService.
func (s *Server) DescribeIndex(ctx context.Context, req *milvuspb.DescribeIndexRequest) (*milvuspb.DescribeIndexResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.coll(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return &milvuspb.DescribeIndexResponse{Status: merr.Status(err)}, nil
	}
	var out []*milvuspb.IndexDescription
	for _, ix := range c.indexes {
		if req.GetIndexName() != "" && ix.desc.GetIndexName() != req.GetIndexName() ||
			req.GetFieldName() != "" && ix.desc.GetFieldName() != req.GetFieldName() {
			continue
		}
		d := proto.Clone(ix.desc).(*milvuspb.IndexDescription)
		d.TotalRows = int64(len(c.rows))
		if ix.polls > 0 {
			ix.polls--
			d.State = commonpb.IndexState_InProgress
			d.PendingIndexRows = d.TotalRows
		} else {
			d.State = commonpb.IndexState_Finished
			d.IndexedRows = d.TotalRows
		}
		out = append(out, d)
	}
	if len(out) == 0 {
		return &milvuspb.DescribeIndexResponse{Status: merr.Status(merr.WrapErrIndexNotFoundForCollection(c.name))}, nil
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GetIndexName() < out[j].GetIndexName() })
	return &milvuspb.DescribeIndexResponse{Status: merr.Success(), IndexDescriptions: out}, nil
}

// LoadCollection implements MilvusService: every vector field needs an index.
func (s *Server) LoadCollection(ctx context.Context, req *milvuspb.LoadCollectionRequest) (*commonpb.Status, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.coll(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return merr.Status(err), nil
	}
	for _, f := range c.schema.GetFields() {
		if f.GetDataType() == schemapb.DataType_FloatVector && c.indexes[f.GetName()] == nil {
			return merr.Status(merr.WrapErrIndexNotFoundForCollection(c.name, fmt.Sprintf("there is no vector index on field: [%s], please create index firstly", f.GetName()))), nil
		}
	}
	if !c.loaded {
		c.loaded, c.loadPolls = true, s.loadPolls
	}
	return merr.Success(), nil
}

// GetLoadingProgress implements MilvusService.
func (s *Server) GetLoadingProgress(ctx context.Context, req *milvuspb.GetLoadingProgressRequest) (*milvuspb.GetLoadingProgressResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.coll(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return &milvuspb.GetLoadingProgressResponse{Status: merr.Status(err)}, nil
	}
	if !c.loaded {
		return &milvuspb.GetLoadingProgressResponse{Status: merr.Status(merr.WrapErrCollectionNotLoaded(c.name))}, nil
	}
	if c.loadPolls > 0 {
		c.loadPolls--
		return &milvuspb.GetLoadingProgressResponse{Status: merr.Success(), Progress: 50}, nil
	}
	return &milvuspb.GetLoadingProgressResponse{Status: merr.Success(), Progress: 100, RefreshProgress: 100}, nil
}

// GetLoadState implements MilvusService.
func (s *Server) GetLoadState(ctx context.Context, req *milvuspb.GetLoadStateRequest) (*milvuspb.GetLoadStateResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.coll(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return &milvuspb.GetLoadStateResponse{Status: merr.Status(err)}, nil
	}
	st := commonpb.LoadState_LoadStateNotLoad
	switch {
	case c.loaded && c.loadPolls > 0:
		st = commonpb.LoadState_LoadStateLoading
	case c.loaded:
		st = commonpb.LoadState_LoadStateLoaded
	}
	return &milvuspb.GetLoadStateResponse{Status: merr.Success(), State: st}, nil
}

// decodeRows turns column-based FieldData into rows, checking them against
// the schema as the proxy does.
func (c *collection) decodeRows(fieldsData []*schemapb.FieldData, numRows uint32) ([]row, error) {
	n := int(numRows)
	rows := make([]row, n)
	for i := range rows {
		rows[i] = row{}
	}
	seen := map[string]bool{}
	for _, fd := range fieldsData {
		f := c.fields[fd.GetFieldName()]
		if f == nil {
			return nil, merr.WrapErrParameterInvalidMsg("the field %s does not exist in collection %s", fd.GetFieldName(), c.name)
		}
		if seen[f.GetName()] {
			return nil, merr.WrapErrParameterInvalidMsg("duplicated field %s found", f.GetName())
		}
		seen[f.GetName()] = true
		if fd.GetType() != f.GetDataType() {
			return nil, merr.WrapErrParameterInvalidMsg("field %s has type %v, the collection defines %v", f.GetName(), fd.GetType(), f.GetDataType())
		}
		switch f.GetDataType() {
		case schemapb.DataType_Int64:
			d := fd.GetScalars().GetLongData().GetData()
			if len(d) != n {
				return nil, merr.WrapErrParameterInvalidMsg("the num_rows (%d) of field (%s) is not equal to passed num_rows (%d)", len(d), f.GetName(), n)
			}
			for i, v := range d {
				rows[i][f.GetName()] = v
			}
		case schemapb.DataType_VarChar:
			d := fd.GetScalars().GetStringData().GetData()
			if len(d) != n {
				return nil, merr.WrapErrParameterInvalidMsg("the num_rows (%d) of field (%s) is not equal to passed num_rows (%d)", len(d), f.GetName(), n)
			}
			max := fieldMaxLen(f)
			for i, v := range d {
				if len(v) > max {
					return nil, merr.WrapErrParameterInvalidMsg("length of varchar field %s exceeds max length, row number: %d, length: %d, max length: %d", f.GetName(), i, len(v), max)
				}
				rows[i][f.GetName()] = v
			}
		case schemapb.DataType_FloatVector:
			dim := fieldDim(f)
			if int(fd.GetVectors().GetDim()) != dim {
				return nil, merr.WrapErrParameterInvalidMsg("the dim (%d) of field data(%s) is not equal to schema dim (%d)", fd.GetVectors().GetDim(), f.GetName(), dim)
			}
			d := fd.GetVectors().GetFloatVector().GetData()
			if len(d) != n*dim {
				return nil, merr.WrapErrParameterInvalidMsg("the num_rows (%d) of field (%s) is not equal to passed num_rows (%d)", len(d)/max(dim, 1), f.GetName(), n)
			}
			for i := range rows {
				v := append([]float32(nil), d[i*dim:(i+1)*dim]...)
				for _, x := range v {
					if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
						return nil, merr.WrapErrParameterInvalidMsg("float vector of field %s contains NaN or Inf at row %d", f.GetName(), i)
					}
				}
				rows[i][f.GetName()] = v
			}
		}
	}
	for _, f := range c.schema.GetFields() {
		if !seen[f.GetName()] && !f.GetAutoID() {
			return nil, merr.WrapErrParameterInvalidMsg("field %s not passed", f.GetName())
		}
	}
	return rows, nil
}

func int64Field(f *schemapb.FieldSchema, v []int64) *schemapb.FieldData {
	return &schemapb.FieldData{Type: schemapb.DataType_Int64, FieldName: f.GetName(), FieldId: f.GetFieldID(),
		Field: &schemapb.FieldData_Scalars{Scalars: &schemapb.ScalarField{Data: &schemapb.ScalarField_LongData{LongData: &schemapb.LongArray{Data: v}}}}}
}

func idsOf(pks []int64) *schemapb.IDs {
	return &schemapb.IDs{IdField: &schemapb.IDs_IntId{IntId: &schemapb.LongArray{Data: pks}}}
}

// Upsert implements MilvusService.
func (s *Server) Upsert(ctx context.Context, req *milvuspb.UpsertRequest) (*milvuspb.MutationResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fail := func(err error) (*milvuspb.MutationResult, error) {
		return &milvuspb.MutationResult{Status: merr.Status(err)}, nil
	}
	c, err := s.coll(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return fail(err)
	}
	if req.GetPartitionName() != "" && c.partitions > 0 {
		return fail(merr.WrapErrParameterInvalidMsg("not support manually specifying the partition names if partition key mode is used"))
	}
	if req.GetPartialUpdate() {
		return fail(merr.WrapErrParameterInvalidMsg("milvustest does not implement partial update"))
	}
	if req.GetNumRows() == 0 {
		return fail(merr.WrapErrParameterInvalidMsg("the number of rows to upsert must be greater than 0"))
	}
	rows, err := c.decodeRows(req.GetFieldsData(), req.GetNumRows())
	if err != nil {
		return fail(err)
	}
	pks := make([]int64, len(rows))
	dup := map[int64]bool{}
	for i, r := range rows {
		pks[i] = r[c.pk.GetName()].(int64)
		if dup[pks[i]] {
			return fail(merr.WrapErrParameterInvalidMsg("duplicate primary keys are not allowed in the same batch"))
		}
		dup[pks[i]] = true
	}
	for i, r := range rows {
		c.rows[pks[i]] = r
	}
	succ := make([]uint32, len(rows))
	for i := range succ {
		succ[i] = uint32(i)
	}
	return &milvuspb.MutationResult{Status: merr.Success(), IDs: idsOf(pks), SuccIndex: succ,
		UpsertCnt: int64(len(rows)), InsertCnt: int64(len(rows)), Timestamp: uint64(time.Now().UnixMilli()) << 18}, nil
}

// Delete implements MilvusService, by any supported expression.
func (s *Server) Delete(ctx context.Context, req *milvuspb.DeleteRequest) (*milvuspb.MutationResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fail := func(err error) (*milvuspb.MutationResult, error) {
		return &milvuspb.MutationResult{Status: merr.Status(err)}, nil
	}
	c, err := s.coll(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return fail(err)
	}
	if strings.TrimSpace(req.GetExpr()) == "" {
		return fail(merr.WrapErrParameterInvalidMsg("expression can't be empty when deleting"))
	}
	e, err := parseExpr(req.GetExpr(), c.fields)
	if err != nil {
		return fail(merr.WrapErrParameterInvalidMsg("%v", err))
	}
	var pks []int64
	for pk, r := range c.rows {
		if e.eval(r) {
			pks = append(pks, pk)
		}
	}
	sort.Slice(pks, func(i, j int) bool { return pks[i] < pks[j] })
	for _, pk := range pks {
		delete(c.rows, pk)
	}
	return &milvuspb.MutationResult{Status: merr.Success(), IDs: idsOf(pks), DeleteCnt: int64(len(pks)),
		Timestamp: uint64(time.Now().UnixMilli()) << 18}, nil
}

// outputFields resolves requested names ("*" = all) to schema fields;
// the primary key is always returned.
func (c *collection) outputFields(names []string, withPK bool) ([]*schemapb.FieldSchema, error) {
	var out []*schemapb.FieldSchema
	seen := map[string]bool{}
	add := func(f *schemapb.FieldSchema) {
		if !seen[f.GetName()] {
			seen[f.GetName()] = true
			out = append(out, f)
		}
	}
	if withPK {
		add(c.pk)
	}
	for _, n := range names {
		if n == "*" {
			for _, f := range c.schema.GetFields() {
				add(f)
			}
			continue
		}
		f := c.fields[n]
		if f == nil {
			return nil, merr.WrapErrParameterInvalidMsg("field %s not exist", n)
		}
		add(f)
	}
	return out, nil
}

func columns(fields []*schemapb.FieldSchema, rows []row) []*schemapb.FieldData {
	out := make([]*schemapb.FieldData, 0, len(fields))
	for _, f := range fields {
		switch f.GetDataType() {
		case schemapb.DataType_Int64:
			v := make([]int64, len(rows))
			for i, r := range rows {
				v[i] = r[f.GetName()].(int64)
			}
			out = append(out, int64Field(f, v))
		case schemapb.DataType_VarChar:
			v := make([]string, len(rows))
			for i, r := range rows {
				v[i] = r[f.GetName()].(string)
			}
			out = append(out, &schemapb.FieldData{Type: schemapb.DataType_VarChar, FieldName: f.GetName(), FieldId: f.GetFieldID(),
				Field: &schemapb.FieldData_Scalars{Scalars: &schemapb.ScalarField{Data: &schemapb.ScalarField_StringData{StringData: &schemapb.StringArray{Data: v}}}}})
		case schemapb.DataType_FloatVector:
			dim := fieldDim(f)
			v := make([]float32, 0, len(rows)*dim)
			for _, r := range rows {
				v = append(v, r[f.GetName()].([]float32)...)
			}
			out = append(out, &schemapb.FieldData{Type: schemapb.DataType_FloatVector, FieldName: f.GetName(), FieldId: f.GetFieldID(),
				Field: &schemapb.FieldData_Vectors{Vectors: &schemapb.VectorField{Dim: int64(dim), Data: &schemapb.VectorField_FloatVector{FloatVector: &schemapb.FloatArray{Data: v}}}}})
		}
	}
	return out
}

func names(fields []*schemapb.FieldSchema) []string {
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = f.GetName()
	}
	return out
}

// filter returns the rows matching expr (all when empty), ordered by pk.
func (c *collection) filter(expression string) ([]int64, error) {
	var e expr
	if strings.TrimSpace(expression) != "" {
		var err error
		if e, err = parseExpr(expression, c.fields); err != nil {
			return nil, merr.WrapErrParameterInvalidMsg("%v", err)
		}
	}
	var pks []int64
	for pk, r := range c.rows {
		if e == nil || e.eval(r) {
			pks = append(pks, pk)
		}
	}
	sort.Slice(pks, func(i, j int) bool { return pks[i] < pks[j] })
	return pks, nil
}

func intParam(p map[string]string, key string, def int) (int, error) {
	v, ok := p[key]
	if !ok || v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, merr.WrapErrParameterInvalidMsg("%s [%s] is invalid", key, v)
	}
	return n, nil
}

// readable is the collection a query or search reads: it must exist and be
// loaded, and partition names are refused in partition-key mode, as Milvus does.
func (s *Server) readable(ctx context.Context, db, name string, partitions []string) (*collection, error) {
	c, err := s.coll(ctx, db, name)
	if err != nil {
		return nil, err
	}
	if !c.loaded {
		return nil, merr.WrapErrCollectionNotLoaded(c.name)
	}
	if len(partitions) > 0 && c.partitions > 0 {
		return nil, merr.WrapErrParameterInvalidMsg("not support manually specifying the partition names if partition key mode is used")
	}
	return c, nil
}

// Query implements MilvusService: results ordered by primary key, which is
// what the client's query iterator relies on.
func (s *Server) Query(ctx context.Context, req *milvuspb.QueryRequest) (*milvuspb.QueryResults, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fail := func(err error) (*milvuspb.QueryResults, error) {
		return &milvuspb.QueryResults{Status: merr.Status(err)}, nil
	}
	c, err := s.readable(ctx, req.GetDbName(), req.GetCollectionName(), req.GetPartitionNames())
	if err != nil {
		return fail(err)
	}
	if len(req.GetExprTemplateValues()) > 0 {
		return fail(merr.WrapErrParameterInvalidMsg("milvustest does not implement expression templates"))
	}
	p := kv(req.GetQueryParams())
	limit, err := intParam(p, "limit", -1)
	if err != nil {
		return fail(err)
	}
	offset, err := intParam(p, "offset", 0)
	if err != nil {
		return fail(err)
	}
	if strings.TrimSpace(req.GetExpr()) == "" && limit < 0 {
		return fail(merr.WrapErrParameterInvalidMsg("empty expression should be used with limit"))
	}
	if limit >= 0 && (limit+offset > MaxQueryWindow || limit <= 0 || offset < 0) {
		return fail(merr.WrapErrParameterInvalidMsg("invalid max query result window, (offset+limit) should be in range [1, %d], but got %d", MaxQueryWindow, limit+offset))
	}
	fields, err := c.outputFields(req.GetOutputFields(), true)
	if err != nil {
		return fail(err)
	}
	pks, err := c.filter(req.GetExpr())
	if err != nil {
		return fail(err)
	}
	if offset > len(pks) {
		offset = len(pks)
	}
	pks = pks[offset:]
	if limit >= 0 && limit < len(pks) {
		pks = pks[:limit]
	}
	rows := make([]row, len(pks))
	for i, pk := range pks {
		rows[i] = c.rows[pk]
	}
	return &milvuspb.QueryResults{Status: merr.Success(), FieldsData: columns(fields, rows), CollectionName: c.name,
		OutputFields: names(fields), PrimaryFieldName: c.pk.GetName()}, nil
}

func decodeFloats(b []byte, dim int) ([]float32, bool) {
	if len(b) != 4*dim {
		return nil, false
	}
	v := make([]float32, dim)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, true
}

func score(metric string, a, b []float32) float32 {
	var dot, na, nb, l2 float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
		l2 += (x - y) * (x - y)
	}
	switch metric {
	case "L2":
		return float32(l2)
	case "IP":
		return float32(dot)
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return float32(dot / math.Sqrt(na*nb))
}

// Search implements MilvusService: exact search (so results are those of an
// ideal index) over the rows matching the filter, ties ordered by primary
// key — not by any field a client might want — so a client that needs a
// particular tie order has to impose it.
func (s *Server) Search(ctx context.Context, req *milvuspb.SearchRequest) (*milvuspb.SearchResults, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fail := func(err error) (*milvuspb.SearchResults, error) {
		return &milvuspb.SearchResults{Status: merr.Status(err)}, nil
	}
	c, err := s.readable(ctx, req.GetDbName(), req.GetCollectionName(), req.GetPartitionNames())
	if err != nil {
		return fail(err)
	}
	//lint:ignore SA1019 the fake must refuse what a client may still send
	if len(req.GetSubReqs()) > 0 || req.GetFunctionScore() != nil || len(req.GetExprTemplateValues()) > 0 || req.GetSearchByPrimaryKeys() {
		return fail(merr.WrapErrParameterInvalidMsg("milvustest implements plain vector search only"))
	}
	p := kv(req.GetSearchParams())
	field := p["anns_field"]
	if field == "" {
		for _, f := range c.schema.GetFields() {
			if f.GetDataType() == schemapb.DataType_FloatVector {
				if field != "" {
					return fail(merr.WrapErrParameterInvalidMsg("multiple anns_fields exist, please specify a anns_field in search_params"))
				}
				field = f.GetName()
			}
		}
	}
	f := c.fields[field]
	if f == nil || f.GetDataType() != schemapb.DataType_FloatVector {
		return fail(merr.WrapErrParameterInvalidMsg("failed to get field schema by name: fieldName(%s) not found", field))
	}
	ix := c.indexes[field]
	if ix == nil {
		return fail(merr.WrapErrIndexNotFoundForCollection(c.name))
	}
	metric := kv(ix.desc.GetParams())["metric_type"]
	if m := p["metric_type"]; m != "" && m != metric {
		return fail(merr.WrapErrParameterInvalid(metric, m, "metric type not match"))
	}
	topk, err := intParam(p, "topk", -1)
	if err != nil {
		return fail(err)
	}
	if topk <= 0 || topk > MaxTopK {
		return fail(merr.WrapErrParameterInvalidRange(1, MaxTopK, topk, "topk is invalid"))
	}
	offset, err := intParam(p, "offset", 0)
	if err != nil {
		return fail(err)
	}
	if offset < 0 || topk+offset > MaxTopK {
		return fail(merr.WrapErrParameterInvalidRange(1, MaxTopK, topk+offset, "top k + offset is invalid"))
	}
	if js := p["params"]; js != "" {
		var sp map[string]any
		if err := json.Unmarshal([]byte(js), &sp); err != nil {
			return fail(merr.WrapErrParameterInvalidMsg("search params: %v", err))
		}
		if ef, ok := sp["ef"].(float64); ok && kv(ix.desc.GetParams())["index_type"] == "HNSW" && int(ef) < topk {
			return fail(merr.WrapErrParameterInvalidMsg("ef(%d) should be larger than k(%d)", int(ef), topk))
		}
	}
	if p["round_decimal"] != "" && p["round_decimal"] != "-1" {
		return fail(merr.WrapErrParameterInvalidMsg("milvustest does not implement round_decimal"))
	}
	var group commonpb.PlaceholderGroup
	if err := proto.Unmarshal(req.GetPlaceholderGroup(), &group); err != nil || len(group.GetPlaceholders()) != 1 {
		return fail(merr.WrapErrParameterInvalidMsg("invalid placeholder group"))
	}
	ph := group.GetPlaceholders()[0]
	if ph.GetType() != commonpb.PlaceholderType_FloatVector {
		return fail(merr.WrapErrParameterInvalidMsg("milvustest searches float vectors only, got %v", ph.GetType()))
	}
	if int64(len(ph.GetValues())) != req.GetNq() {
		return fail(merr.WrapErrParameterInvalidMsg("nq (%d) does not match the number of vectors (%d)", req.GetNq(), len(ph.GetValues())))
	}
	dim := fieldDim(f)
	queries := make([][]float32, len(ph.GetValues()))
	for i, b := range ph.GetValues() {
		v, ok := decodeFloats(b, dim)
		if !ok {
			return fail(merr.WrapErrParameterInvalidMsg("the dimension of the vector to search (%d) does not match the field dimension (%d)", len(b)/4, dim))
		}
		queries[i] = v
	}
	fields, err := c.outputFields(req.GetOutputFields(), false)
	if err != nil {
		return fail(err)
	}
	cand, err := c.filter(req.GetDsl())
	if err != nil {
		return fail(err)
	}
	res := &schemapb.SearchResultData{NumQueries: int64(len(queries)), TopK: int64(topk), OutputFields: names(fields), PrimaryFieldName: c.pk.GetName()}
	var allPKs []int64
	var allRows []row
	for _, q := range queries {
		type hit struct {
			pk    int64
			score float32
		}
		hits := make([]hit, len(cand))
		for i, pk := range cand {
			hits[i] = hit{pk, score(metric, q, c.rows[pk][field].([]float32))}
		}
		sort.SliceStable(hits, func(i, j int) bool { // cand is in pk order
			if metric == "L2" {
				return hits[i].score < hits[j].score
			}
			return hits[i].score > hits[j].score
		})
		hits = hits[min(offset, len(hits)):]
		hits = hits[:min(topk, len(hits))]
		for _, h := range hits {
			allPKs = append(allPKs, h.pk)
			allRows = append(allRows, c.rows[h.pk])
			res.Scores = append(res.Scores, h.score)
		}
		res.Topks = append(res.Topks, int64(len(hits)))
	}
	res.Ids = idsOf(allPKs)
	if allPKs == nil {
		res.Ids = idsOf([]int64{})
	}
	res.FieldsData = columns(fields, allRows)
	return &milvuspb.SearchResults{Status: merr.Success(), Results: res, CollectionName: c.name}, nil
}
