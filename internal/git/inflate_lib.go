//go:build lib_inflate

package git

import (
	"bytes"
	"errors"
	"io"

	"github.com/klauspost/compress/zlib"
)

// The library path of inflate.go, built with -tags lib_inflate for bench/twins.sh: the same
// contract through klauspost/compress's zlib reader, reset for each stream.

var (
	errInputEnd   = errors.New("unexpected end of the compressed stream")
	errOutputFull = errors.New("more output than the declared size")
)

type inflater struct {
	zr  io.ReadCloser
	src bytes.Reader
}

type zlibResult int

const (
	zlibEnded zlibResult = iota
	zlibOutputFull
)

func (f *inflater) inflate(src, out []byte, exact bool) (res []byte, how zlibResult, used int, err error) {
	f.src.Reset(src)
	if f.zr == nil {
		f.zr, err = zlib.NewReader(&f.src)
	} else {
		err = f.zr.(zlib.Resetter).Reset(&f.src, nil)
	}
	buf := out[:cap(out)]
	n := 0
	for err == nil && n < len(buf) {
		var m int
		m, err = f.zr.Read(buf[n:])
		n += m
	}
	out = buf[:n]
	if err == nil { // out is full: does the stream end here?
		var one [1]byte
		var m int
		m, err = f.zr.Read(one[:])
		if m > 0 || err == nil {
			if exact {
				return out, 0, f.used(src), errOutputFull
			}
			return out, zlibOutputFull, f.used(src), nil
		}
		if errors.Is(err, io.ErrUnexpectedEOF) && !exact {
			return out, zlibOutputFull, f.used(src), nil
		}
	}
	switch {
	case errors.Is(err, io.EOF):
		if exact && n != len(buf) {
			return out, 0, f.used(src), errInputEnd
		}
		return out, zlibEnded, f.used(src), nil
	case errors.Is(err, io.ErrUnexpectedEOF):
		return out, 0, f.used(src), errInputEnd
	}
	return out, 0, f.used(src), err
}

func (f *inflater) used(src []byte) int { return len(src) - f.src.Len() }
