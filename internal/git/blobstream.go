package git

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash"
	"io"
	"path/filepath"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/klauspost/compress/zlib"
)

// blobContent is a blob being read: whole (data), or streamed (rc, which the reader closes).
type blobContent struct {
	size int64
	data []byte        // the whole content, when read whole (shared with the cache: read only)
	rc   io.ReadCloser // the content as a stream, when streamed
}

// reader returns the content as a reader: a stream is handed on once.
func (b *blobContent) reader() io.Reader {
	if b.rc != nil {
		return b.rc
	}
	return bytes.NewReader(b.data)
}

// close releases a stream.
func (b *blobContent) close() error {
	if b.rc == nil {
		return nil
	}
	return b.rc.Close()
}

// openBlob opens blob h, the file at path (named in errors): whole when it has at most streamAbove
// bytes, else streamed, which takes a fixed amount of memory whatever the size (SPEC §5.3 D). An
// undeltified pack entry is inflated from the pack file, not from its map, so that the compressed
// bytes read are page cache, not the process's memory; a loose object is inflated from its file;
// an object in an alternate store is go-git's stream. A deltified entry is read whole, delta chain
// applied (git does not deltify a blob over core.bigFileThreshold, 512 MiB by default). A stream
// checks the declared size, the zlib checksum and the blob's id when it reaches the end; what is
// read whole is verified before it is returned.
func (r *Repo) openBlob(path string, h plumbing.Hash, streamAbove int64) (blobContent, error) {
	b, err := r.store.openBlob(h, streamAbove)
	if err != nil {
		return blobContent{}, fmt.Errorf("read %s (%s): %w", path, h, err)
	}
	return b, nil
}

func (s *lazyStore) openBlob(h plumbing.Hash, streamAbove int64) (blobContent, error) {
	pi, off, ok, err := s.locate(h)
	if err != nil {
		return blobContent{}, err
	}
	var typ plumbing.ObjectType
	var data []byte
	if ok {
		if b, streamed, err := s.streamPacked(h, pi, off, streamAbove); streamed || err != nil {
			return b, err
		}
		typ, data, err = s.readPackedAs(h, pi, off)
	} else {
		if b, found, err := s.streamLoose(h, streamAbove); found || err != nil {
			return b, err
		}
		typ, data, err = s.readUnpacked(h) // an alternate store's, or the error of a loose file
	}
	if err == nil && typ != plumbing.BlobObject {
		err = fmt.Errorf("object is a %s, not a blob", typ)
	}
	return blobContent{size: int64(len(data)), data: data}, err
}

// streamPacked streams the entry at off in pack pi, object h, when it is an undeltified blob of
// more than streamAbove bytes; ok is false when it is not (the caller reads it whole). The stream
// is hashed as it is read and verified against h at its end.
func (s *lazyStore) streamPacked(h plumbing.Hash, pi int, off, streamAbove int64) (b blobContent, ok bool, err error) {
	p := s.packs[pi]
	pack, err := p.mapPack()
	if err != nil {
		return blobContent{}, false, err
	}
	e, err := parsePackEntry(pack, off)
	if err != nil {
		return blobContent{}, false, fmt.Errorf("read from %s: %w", p.name, err)
	}
	if e.typ != plumbing.BlobObject || e.size <= streamAbove {
		return blobContent{}, false, nil
	}
	f, _, err := openRegular(filepath.Join(p.packDir, p.name+".pack"))
	if err != nil {
		return blobContent{}, false, fmt.Errorf("open pack %s: %w", p.name, err)
	}
	src := io.NewSectionReader(f, e.dataOff, int64(len(pack))-packTrailerLen-e.dataOff)
	zr, err := zlib.NewReader(bufio.NewReaderSize(src, 64<<10))
	if err != nil {
		_ = f.Close()
		return blobContent{}, false, fmt.Errorf("entry at offset %d of %s: inflate: %w", off, p.name, err)
	}
	return blobContent{size: e.size, rc: s.newSizedStream(zr, h, e.size, zr, f)}, true, nil
}

// streamLoose streams loose object h when it is a blob of more than streamAbove bytes, and else
// reads it whole from the same open file; ok is false when there is no such loose file (an
// alternate store may have the object).
func (s *lazyStore) streamLoose(h plumbing.Hash, streamAbove int64) (b blobContent, ok bool, err error) {
	hx := h.String()
	f, _, err := openRegular(filepath.Join(s.objectsDir, hx[:2], hx[2:]))
	if err != nil {
		return blobContent{}, false, nil // absent (an alternate may have it) or unreadable: the whole read says which
	}
	zr, err := zlib.NewReader(bufio.NewReaderSize(f, 64<<10))
	if err != nil {
		_ = f.Close()
		return blobContent{}, false, fmt.Errorf("read loose object %s: inflate: %w", h, err)
	}
	closeAll := func() { _ = zr.Close(); _ = f.Close() }
	typ, size, err := looseHeader(zr)
	if err != nil {
		closeAll()
		return blobContent{}, false, fmt.Errorf("read loose object %s: %w", h, err)
	}
	rc := s.newSizedStream(zr, h, size, zr, f)
	switch {
	case typ != plumbing.BlobObject:
		closeAll()
		return blobContent{}, false, fmt.Errorf("object is a %s, not a blob", typ)
	case size > streamAbove:
		return blobContent{size: size, rc: rc}, true, nil
	}
	defer closeAll()
	data, err := io.ReadAll(rc) // at most streamAbove bytes, which the caller bounds
	if err != nil {
		return blobContent{}, false, fmt.Errorf("read loose object %s: %w", h, err)
	}
	return blobContent{size: size, data: data}, true, nil
}

// looseHeader reads the "type size\0" header of a loose object from its inflated stream.
func looseHeader(zr io.Reader) (plumbing.ObjectType, int64, error) {
	var hdr [32]byte // "blob 1073741824\0" and the like
	n := 0
	for ; n == 0 || hdr[n-1] != 0; n++ {
		if n == len(hdr) {
			return plumbing.InvalidObject, 0, errors.New("header longer than 32 bytes")
		}
		if _, err := io.ReadFull(zr, hdr[n:n+1]); err != nil {
			return plumbing.InvalidObject, 0, fmt.Errorf("header: %w", err)
		}
	}
	name, sizeText, ok := bytes.Cut(hdr[:n-1], []byte(" "))
	typ, err := plumbing.ParseObjectType(string(name))
	if !ok || err != nil || typ < plumbing.CommitObject || typ > plumbing.TagObject {
		return plumbing.InvalidObject, 0, fmt.Errorf("malformed header %q", hdr[:n-1])
	}
	size, err := strconv.ParseInt(string(sizeText), 10, 64)
	if err != nil || size < 0 || (len(sizeText) > 1 && sizeText[0] == '0') {
		return plumbing.InvalidObject, 0, fmt.Errorf("malformed size in header %q", hdr[:n-1])
	}
	return typ, size, nil
}

// sizedStream hands on exactly size bytes of an inflated stream, the content of blob id, and then
// requires its end (where zlib checks the checksum): fewer or more bytes than the header declares
// are an error, and so is content that does not hash to id (a *CorruptError, at the end: a reader
// must read to io.EOF to know that what it read is the blob).
type sizedStream struct {
	r           io.Reader
	left, size  int64
	closers     []io.Closer
	errAtTheEnd error
	id          plumbing.Hash
	sum         hash.Hash // the blob's header and the content handed on so far
	store       *lazyStore
}

// newSizedStream streams the size-byte content of blob id from r, closing closers on Close.
func (s *lazyStore) newSizedStream(r io.Reader, id plumbing.Hash, size int64, closers ...io.Closer) *sizedStream {
	return &sizedStream{r: r, left: size, size: size, closers: closers, id: id,
		sum: newObjectHash(plumbing.BlobObject, size), store: s}
}

func (z *sizedStream) Read(p []byte) (int, error) {
	if z.left == 0 {
		if z.errAtTheEnd == nil {
			z.errAtTheEnd = z.checkEnd()
		}
		return 0, z.errAtTheEnd
	}
	if int64(len(p)) > z.left {
		p = p[:z.left]
	}
	n, err := z.r.Read(p)
	z.left -= int64(n)
	_, _ = z.sum.Write(p[:n])
	switch {
	case errors.Is(err, io.EOF) && z.left > 0:
		return n, fmt.Errorf("inflate: %d bytes, the header says %d", z.size-z.left, z.size)
	case errors.Is(err, io.EOF):
		return n, nil // the end is checked on the next read
	case err != nil:
		return n, fmt.Errorf("inflate: %w", err)
	}
	return n, nil
}

// checkEnd reads past the declared size: the stream must end there, its checksum verified, and
// what it held must hash to the blob's id.
func (z *sizedStream) checkEnd() error {
	var one [1]byte
	for {
		n, err := z.r.Read(one[:])
		switch {
		case n > 0:
			return fmt.Errorf("inflate: more than the %d bytes the header says", z.size)
		case errors.Is(err, io.EOF):
			if detail, ok := checkSum(z.sum, plumbing.BlobObject, z.size, z.id); !ok {
				return z.store.corruption(z.id, detail)
			}
			return io.EOF
		case err != nil:
			return fmt.Errorf("inflate: %w", err)
		}
	}
}

func (z *sizedStream) Close() error {
	var errs []error
	for _, c := range z.closers {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}
