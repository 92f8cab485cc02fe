package server

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"connectrpc.com/connect"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/c2cluster/c2cluster/internal/jsonscan"
)

// BodyTimeoutDefault is Config.BodyTimeout's default: a request body of the
// largest size (MaxC1BytesDefault) arrives in it at 4.5 Mbit/s.
const BodyTimeoutDefault = 2 * time.Minute

// ReadMaxBytes is the largest API request message the server reads, after
// decompression: a c1_json of MaxC1Bytes as HTTP/JSON (base64, 4/3 of the
// bytes) with the other fields. Larger messages are resource_exhausted, and
// a compressed one is not decompressed further than this.
func (s *Server) ReadMaxBytes() int64 { return s.cfg.MaxC1Bytes*4/3 + 64<<10 }

// apiLimits holds the request-cost counters (registered on first use).
type apiLimits struct {
	once sync.Once
	// read counts request-body bytes as sent; decompressed the bytes the
	// gzip decompressor produced.
	read, decompressed prometheus.Counter
}

func (s *Server) limits() *apiLimits {
	a := &s.api
	a.once.Do(func() {
		vec := prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "c2", Name: "api_request_bytes_total",
			Help: "Bytes of API request bodies: as read from clients (stage=read) and as produced by decompressing gzip bodies (stage=decompressed).",
		}, []string{"stage"})
		if err := s.cfg.Metrics.Registry.Register(vec); err != nil {
			var are prometheus.AlreadyRegisteredError
			if errors.As(err, &are) {
				vec = are.ExistingCollector.(*prometheus.CounterVec)
			}
		}
		a.read, a.decompressed = vec.WithLabelValues("read"), vec.WithLabelValues("decompressed")
	})
	return a
}

// apiOptions are the handler options that bound what one request costs:
// the message size, a gzip decompressor that stops at that size, and a JSON
// codec that rejects duplicate member names and unknown enum names.
func (s *Server) apiOptions() connect.HandlerOption {
	max := s.ReadMaxBytes()
	lim := s.limits()
	return connect.WithHandlerOptions(
		connect.WithReadMaxBytes(int(max)),
		connect.WithCompression("gzip",
			func() connect.Decompressor { return &cappedGzip{max: max, count: lim.decompressed} },
			func() connect.Compressor { return gzip.NewWriter(io.Discard) }),
		connect.WithCodec(&strictJSON{name: "json"}),
		connect.WithCodec(&strictJSON{name: "json; charset=utf-8"}),
	)
}

// cappedGzip is a gzip decompressor that produces at most max+1 bytes of a
// message (enough for connect to see it is over max) and then fails: a
// small compressed body cannot make the server inflate more than that.
type cappedGzip struct {
	zr    *gzip.Reader
	n     int64
	max   int64
	count prometheus.Counter
}

func (d *cappedGzip) Read(p []byte) (int, error) {
	if d.zr == nil {
		return 0, io.ErrUnexpectedEOF
	}
	left := d.max + 1 - d.n
	if left <= 0 {
		return 0, connect.NewError(connect.CodeResourceExhausted, fmt.Errorf("the decompressed request message exceeds %d bytes", d.max))
	}
	if int64(len(p)) > left {
		p = p[:left]
	}
	n, err := d.zr.Read(p)
	d.n += int64(n)
	d.count.Add(float64(n))
	return n, err
}

func (d *cappedGzip) Close() error {
	if d.zr == nil {
		return nil
	}
	return d.zr.Close()
}

func (d *cappedGzip) Reset(r io.Reader) error {
	d.n = 0
	if d.zr == nil {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return err
		}
		d.zr = zr
		return nil
	}
	return d.zr.Reset(r)
}

// bodyLimits wraps the API handler: each request body counts its bytes,
// and must arrive within BodyTimeout of the request's start (the read
// deadline is lifted once the body is read, so Watch streams and Await
// long-polls run on); a body still arriving then fails, and the
// connection with it.
func (s *Server) bodyLimits(h http.Handler) http.Handler {
	lim := s.limits()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			b := &countedBody{ReadCloser: r.Body, count: lim.read}
			if d := s.cfg.BodyTimeout; d > 0 {
				rc := http.NewResponseController(w)
				if rc.SetReadDeadline(time.Now().Add(d)) == nil {
					b.rc, b.timeout = rc, d
					if r.ProtoMajor == 1 {
						b.header = w.Header()
					}
				}
			}
			r.Body = b
		}
		h.ServeHTTP(w, r)
	})
}

type countedBody struct {
	io.ReadCloser
	count   prometheus.Counter
	rc      *http.ResponseController
	timeout time.Duration
	// header is the HTTP/1 response's, to close the connection of a body
	// that timed out (HTTP/2 ends only the stream).
	header http.Header
}

func (b *countedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.count.Add(float64(n))
	switch {
	case b.rc == nil:
	case errors.Is(err, io.EOF):
		_ = b.rc.SetReadDeadline(time.Time{})
		b.rc = nil
	case errors.Is(err, os.ErrDeadlineExceeded):
		if b.header != nil {
			b.header.Set("Connection", "close")
		}
		err = fmt.Errorf("the request body did not arrive within %v: %w", b.timeout, os.ErrDeadlineExceeded)
	}
	return n, err
}

// strictJSON is the API's HTTP/JSON codec: protojson as connect's own
// (unknown fields are ignored, for clients of a newer API), after a scan
// that rejects a member name given twice in one object and an enum value
// name the enum does not have (protojson would ignore it, leaving the
// field at its default: "priority": "BOGUS" would be the normal lane).
type strictJSON struct{ name string }

func (c *strictJSON) Name() string { return c.name }

func (c *strictJSON) Marshal(m any) ([]byte, error) {
	pm, ok := m.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("%T is not a proto.Message", m)
	}
	return protojson.MarshalOptions{}.Marshal(pm)
}

func (c *strictJSON) Unmarshal(data []byte, m any) error {
	pm, ok := m.(proto.Message)
	if !ok {
		return fmt.Errorf("%T is not a proto.Message", m)
	}
	if len(data) == 0 {
		return errors.New("zero-length payload is not a valid JSON object")
	}
	if err := CheckJSON(data, pm.ProtoReflect().Descriptor()); err != nil {
		return err
	}
	return protojson.UnmarshalOptions{DiscardUnknown: true}.Unmarshal(data, pm)
}

// CheckJSON checks an HTTP/JSON request of message md in one pass: JSON
// grammar, no member name twice in one object, and every enum given by
// name a name of its enum. Numbers, unknown fields and map entries are
// left to protojson and the handlers.
func CheckJSON(data []byte, md protoreflect.MessageDescriptor) error {
	return jsonscan.Scan(data, jsonscan.Options{String: func(path []jsonscan.Step, raw []byte) error {
		fd := fieldAt(md, path)
		if fd == nil || fd.Kind() != protoreflect.EnumKind || fd.Enum().FullName() == "google.protobuf.NullValue" {
			return nil
		}
		name := jsonscan.Unquote(raw)
		if fd.Enum().Values().ByName(protoreflect.Name(name)) != nil {
			return nil
		}
		vals := fd.Enum().Values()
		known := make([]string, vals.Len())
		for i := range known {
			known[i] = string(vals.Get(i).Name())
		}
		return fmt.Errorf("unknown value %q of enum %s (known: %s)", name, fd.Enum().FullName(), strings.Join(known, ", "))
	}})
}

// fieldAt is the field whose value (or list element) is at path in a
// message of md, or nil when path leads elsewhere (an unknown field, a map
// entry, a well-known type's JSON form).
func fieldAt(md protoreflect.MessageDescriptor, path []jsonscan.Step) protoreflect.FieldDescriptor {
	var fd protoreflect.FieldDescriptor
	for i, st := range path {
		if st.Name == nil { // a list element: of fd's list
			if fd == nil || !fd.IsList() {
				return nil
			}
			continue
		}
		if md == nil || (i > 0 && path[i-1].Name != nil && fd != nil && fd.IsList()) {
			return nil
		}
		if strings.HasPrefix(string(md.FullName()), "google.protobuf.") {
			return nil
		}
		name := string(st.Name)
		fd = md.Fields().ByJSONName(name)
		if fd == nil {
			fd = md.Fields().ByName(protoreflect.Name(name))
		}
		if fd == nil || fd.IsMap() {
			return nil
		}
		md = fd.Message()
	}
	return fd
}
