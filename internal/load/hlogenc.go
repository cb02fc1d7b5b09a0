package load

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"math"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// V2 encoding cookies of HdrHistogram's compressed form (word size 8).
const (
	v2Cookie           = hdr.V2EncodingCookieBase | 0x10
	v2CompressedCookie = hdr.V2CompressedEncodingCookieBase | 0x10
)

// hlogEncoder writes histograms in HdrHistogram's V2 compressed encoding,
// base64, as Histogram.Encode does and hdr.Decode reads. Encode builds a
// new zlib writer at BestCompression per call: about 3 ms and 800 KB per
// interval histogram, four per second for a one-operation run, which was
// several µs per request on a small box. This encoder reuses one writer at
// BestSpeed and its buffers. Not safe for concurrent use: the recorder's
// merging goroutine owns it.
type hlogEncoder struct {
	raw []byte       // header and payload, before compression
	z   bytes.Buffer // compressed
	zw  *zlib.Writer
	out []byte // cookie, length, compressed
}

// encode returns h's encoding in a new slice.
func (e *hlogEncoder) encode(h *hdr.Histogram) []byte {
	s := h.Export()
	last := len(s.Counts) - 1
	for last >= 0 && s.Counts[last] == 0 {
		last--
	}
	ratio := s.IntegerToDoubleConversionRatio
	if ratio == 0 {
		ratio = 1
	}
	raw := e.raw[:0]
	raw = binary.BigEndian.AppendUint32(raw, uint32(v2Cookie))
	raw = binary.BigEndian.AppendUint32(raw, 0) // payload length, below
	raw = binary.BigEndian.AppendUint32(raw, 0) // normalizing index offset
	raw = binary.BigEndian.AppendUint32(raw, uint32(s.SignificantFigures))
	raw = binary.BigEndian.AppendUint64(raw, uint64(s.LowestTrackableValue))
	raw = binary.BigEndian.AppendUint64(raw, uint64(s.HighestTrackableValue))
	raw = binary.BigEndian.AppendUint64(raw, math.Float64bits(ratio))
	head := len(raw)
	// Counts as ZigZag LEB128; a run of zeros as its negated length.
	for i := 0; i <= last; {
		c := s.Counts[i]
		if c == 0 {
			j := i + 1
			for j <= last && s.Counts[j] == 0 {
				j++
			}
			raw = appendZigZag(raw, -int64(j-i))
			i = j
			continue
		}
		raw = appendZigZag(raw, c)
		i++
	}
	binary.BigEndian.PutUint32(raw[4:], uint32(len(raw)-head))
	e.raw = raw

	e.z.Reset()
	if e.zw == nil {
		e.zw, _ = zlib.NewWriterLevel(&e.z, zlib.BestSpeed) // a valid level: no error
	} else {
		e.zw.Reset(&e.z)
	}
	e.zw.Write(raw) // writes to a bytes.Buffer do not fail
	e.zw.Close()
	out := e.out[:0]
	out = binary.BigEndian.AppendUint32(out, uint32(v2CompressedCookie))
	out = binary.BigEndian.AppendUint32(out, uint32(e.z.Len()))
	out = append(out, e.z.Bytes()...)
	e.out = out
	b := make([]byte, base64.StdEncoding.EncodedLen(len(out)))
	base64.StdEncoding.Encode(b, out)
	return b
}

// appendZigZag appends v ZigZag-encoded as LEB128 (counts stay far below
// 2^56, where HdrHistogram's 9-byte form equals the plain varint).
func appendZigZag(b []byte, v int64) []byte {
	return binary.AppendUvarint(b, uint64(v<<1)^uint64(v>>63))
}
