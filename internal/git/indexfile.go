package git

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"math"
	"time"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// Index entry layout (git's index-format): ctime, mtime (seconds and nanoseconds), dev, ino,
// mode, uid, gid, size (4 bytes each), the object id (20), the flags (2), then, when the
// extended flag is set, 2 more bytes of flags, then the path.
const (
	ixHeaderLen   = 12
	ixEntryLen    = 62
	ixExtended    = 0x4000
	ixNameMask    = 0xfff
	ixIntentToAdd = 1 << 13
	ixSkipWT      = 1 << 14
	ixTrailerLen  = sha1.Size
	ixExtHeader   = 8
)

// decodeIndex decodes an index file held in memory. Its answer is go-git's
// (index.NewDecoder(bytes.NewReader(data)).Decode), which TestDecodeIndexEqualsGoGit checks on
// every index shape: the entries are parsed in place (go-git reads each field through
// encoding/binary's reflection), the checksum is crypto/sha1's (the digest sha1cd gives; go-git
// does not look at its collision flag), and the extensions are decoded by go-git's own decoder
// on an index of no entries that carries them. Whatever the fast path does not parse (a malformed
// header or entry, extensions that do not end at the checksum, a wrong checksum) is decoded by
// go-git from the start, so every refusal is go-git's.
func decodeIndex(data []byte) (*index.Index, error) {
	if idx, ok := decodeIndexFast(data); ok {
		return idx, nil
	}
	idx := &index.Index{}
	if err := index.NewDecoder(bytes.NewReader(data)).Decode(idx); err != nil {
		return nil, err
	}
	return idx, nil
}

func decodeIndexFast(data []byte) (*index.Index, bool) {
	if len(data) < ixHeaderLen+ixTrailerLen || string(data[:4]) != "DIRC" {
		return nil, false
	}
	idx := &index.Index{Version: binary.BigEndian.Uint32(data[4:])}
	if idx.Version < index.DecodeVersionSupported.Min || idx.Version > index.DecodeVersionSupported.Max {
		return nil, false
	}
	end := len(data) - ixTrailerLen
	count := binary.BigEndian.Uint32(data[8:])
	if uint64(count) > uint64(end-ixHeaderLen)/ixEntryLen+1 {
		return nil, false // more entries than the bytes could hold
	}
	p := ixHeaderLen
	if count > 0 {
		idx.Entries = make([]*index.Entry, 0, count)
		store := make([]index.Entry, count)
		for i := range store {
			var ok bool
			if p, ok = decodeIndexEntry(data[:end], p, idx, &store[i]); !ok {
				return nil, false
			}
			idx.Entries = append(idx.Entries, &store[i])
		}
	}
	// go-git reads extensions while at least a header and the checksum remain, then the checksum.
	ext := p
	for end-p >= ixExtHeader {
		n := uint64(binary.BigEndian.Uint32(data[p+4:]))
		if n > uint64(end-p-ixExtHeader) {
			return nil, false
		}
		p += ixExtHeader + int(n)
	}
	if p != end {
		return nil, false
	}
	if sum := sha1.Sum(data[:end]); !bytes.Equal(sum[:], data[end:]) {
		return nil, false
	}
	if ext < end && !decodeIndexExtensions(idx, data[ext:end]) {
		return nil, false
	}
	return idx, true
}

// decodeIndexExtensions decodes extension bytes with go-git's decoder, as the extensions of an
// index of no entries, and keeps what it read.
func decodeIndexExtensions(idx *index.Index, ext []byte) bool {
	b := make([]byte, 0, ixHeaderLen+len(ext)+ixTrailerLen)
	b = append(b, "DIRC"...)
	b = binary.BigEndian.AppendUint32(b, idx.Version)
	b = binary.BigEndian.AppendUint32(b, 0)
	b = append(b, ext...)
	sum := sha1.Sum(b)
	b = append(b, sum[:]...)
	var got index.Index
	if index.NewDecoder(bytes.NewReader(b)).Decode(&got) != nil {
		return false
	}
	idx.Cache, idx.ResolveUndo, idx.EndOfIndexEntry = got.Cache, got.ResolveUndo, got.EndOfIndexEntry
	return true
}

// decodeIndexEntry reads the entry at data[p:] into e as go-git's decoder does, and returns the
// offset after it (and its padding).
func decodeIndexEntry(data []byte, p int, idx *index.Index, e *index.Entry) (int, bool) {
	if len(data)-p < ixEntryLen {
		return 0, false
	}
	be := binary.BigEndian
	h := data[p : p+ixEntryLen]
	if sec, nsec := be.Uint32(h[0:]), be.Uint32(h[4:]); sec != 0 || nsec != 0 {
		e.CreatedAt = time.Unix(int64(sec), int64(nsec))
	}
	if sec, nsec := be.Uint32(h[8:]), be.Uint32(h[12:]); sec != 0 || nsec != 0 {
		e.ModifiedAt = time.Unix(int64(sec), int64(nsec))
	}
	e.Dev, e.Inode = be.Uint32(h[16:]), be.Uint32(h[20:])
	e.Mode = filemode.FileMode(be.Uint32(h[24:]))
	e.UID, e.GID, e.Size = be.Uint32(h[28:]), be.Uint32(h[32:]), be.Uint32(h[36:])
	copy(e.Hash[:], h[40:60])
	flags := be.Uint16(h[60:])
	e.Stage = index.Stage(flags>>12) & 0x3
	read := ixEntryLen
	p += ixEntryLen
	if flags&ixExtended != 0 {
		if len(data)-p < 2 {
			return 0, false
		}
		extended := be.Uint16(data[p:])
		e.IntentToAdd = extended&ixIntentToAdd != 0
		e.SkipWorktree = extended&ixSkipWT != 0
		read += 2
		p += 2
	}
	if idx.Version == 4 {
		return decodeIndexNameV4(data, p, idx, e)
	}
	nameLen, consumed := int(flags&ixNameMask), int(flags&ixNameMask)
	if nameLen == ixNameMask {
		nul := bytes.IndexByte(data[p:], 0)
		if nul < 0 {
			return 0, false
		}
		nameLen, consumed = nul, nul+1
	} else if len(data)-p < nameLen {
		return 0, false
	}
	e.Name = string(data[p : p+nameLen])
	p += consumed
	// go-git's padEntry: 8 - (read+len(name))%8 bytes, less the NUL a long name consumed.
	if pad := 8 - (read+nameLen)%8 - (consumed - nameLen); pad > 0 {
		if len(data)-p < pad {
			return 0, false
		}
		p += pad
	}
	return p, true
}

// decodeIndexNameV4 reads a version 4 path: the number of bytes to strip from the previous
// entry's path (git's offset varint), then the rest of the path up to a NUL; no padding.
func decodeIndexNameV4(data []byte, p int, idx *index.Index, e *index.Entry) (int, bool) {
	var v int64
	for first := true; ; first = false {
		if p >= len(data) {
			return 0, false
		}
		c := data[p]
		p++
		if !first {
			if v >= (math.MaxInt64-0x7f)>>7 {
				return 0, false
			}
			v = (v + 1) << 7
		}
		v += int64(c & 0x7f)
		if c&0x80 == 0 {
			break
		}
	}
	var base string
	if n := len(idx.Entries); n > 0 {
		prev := idx.Entries[n-1].Name
		if v > int64(len(prev)) {
			return 0, false
		}
		base = prev[:len(prev)-int(v)]
	} else if v > 0 {
		return 0, false
	}
	nul := bytes.IndexByte(data[p:], 0)
	if nul < 0 {
		return 0, false
	}
	e.Name = base + string(data[p:p+nul])
	return p + nul + 1, true
}
