package cmd

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// The forgeries an agent can make in a repository it can write (SPEC §5.1, "nothing in it is
// taken on trust"), as testscript commands over the git repository of the current directory.
// They are built with the git binary and by hand, never through the code under test.

// gitObject is an object as git stores it: its id, type and content.
type gitObject struct {
	id   string
	typ  string
	data []byte
}

// scriptGit runs git in the script's current directory and returns its output.
func scriptGit(ts *testscript.TestScript, stdin []byte, args ...string) []byte {
	cmd := exec.Command("git", args...)
	cmd.Dir = ts.MkAbs(".")
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		ts.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// revObject resolves rev (anything git rev-parse takes: HEAD^{tree}, HEAD:path) and reads it.
func revObject(ts *testscript.TestScript, rev string) gitObject {
	id := strings.TrimSpace(string(scriptGit(ts, nil, "rev-parse", "--verify", rev)))
	typ := strings.TrimSpace(string(scriptGit(ts, nil, "cat-file", "-t", id)))
	return gitObject{id: id, typ: typ, data: scriptGit(ts, nil, "cat-file", typ, id)}
}

// allObjects reads every object of the repository, sorted by id.
func allObjects(ts *testscript.TestScript) []gitObject {
	out := bufio.NewReader(bytes.NewReader(scriptGit(ts, nil, "cat-file", "--batch-all-objects", "--batch")))
	var objs []gitObject
	for {
		line, err := out.ReadString('\n')
		if err == io.EOF {
			break
		}
		ts.Check(err)
		f := strings.Fields(line)
		if len(f) != 3 {
			ts.Fatalf("cat-file --batch: %q", line)
		}
		n, err := strconv.Atoi(f[2])
		ts.Check(err)
		data := make([]byte, n+1) // and the newline after it
		_, err = io.ReadFull(out, data)
		ts.Check(err)
		objs = append(objs, gitObject{id: f[0], typ: f[1], data: data[:n]})
	}
	sort.Slice(objs, func(i, j int) bool { return objs[i].id < objs[j].id })
	return objs
}

// gitDir is the script repository's .git directory.
func gitDir(ts *testscript.TestScript) string {
	return strings.TrimSpace(string(scriptGit(ts, nil, "rev-parse", "--absolute-git-dir")))
}

// cmdForgeLoose: forgeloose VICTIM SOURCE writes the loose object file of SOURCE's content under
// VICTIM's id (git's object files are read-only: the agent chmods first). VICTIM's id then names
// SOURCE's content to any reader that does not hash what it reads.
func cmdForgeLoose(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: forgeloose VICTIM-REV SOURCE-REV")
	}
	victim, source := revObject(ts, args[0]), revObject(ts, args[1])
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	fmt.Fprintf(zw, "%s %d\x00", source.typ, len(source.data))
	_, _ = zw.Write(source.data)
	ts.Check(zw.Close())
	path := filepath.Join(gitDir(ts), "objects", victim.id[:2], victim.id[2:])
	ts.Check(os.MkdirAll(filepath.Dir(path), 0o755))
	if _, err := os.Stat(path); err == nil {
		ts.Check(os.Chmod(path, 0o644))
	}
	ts.Check(os.WriteFile(path, z.Bytes(), 0o444))
}

// cmdForgePack: forgepack [-delta] VICTIM SOURCE replaces every pack and loose object of the
// repository by one pack of all its objects, made by hand, whose entry for VICTIM holds SOURCE's
// content: undeltified, or (-delta) an OFS_DELTA on SOURCE's own entry that copies it whole. The
// pack and its index have valid checksums and the pack is named after its checksum, as git names
// it.
func cmdForgePack(ts *testscript.TestScript, neg bool, args []string) {
	delta := len(args) > 0 && args[0] == "-delta"
	if delta {
		args = args[1:]
	}
	if neg || len(args) != 2 {
		ts.Fatalf("usage: forgepack [-delta] VICTIM-REV SOURCE-REV")
	}
	victim, source := revObject(ts, args[0]), revObject(ts, args[1])
	objs := allObjects(ts)
	// SOURCE's entry first, so that VICTIM's delta can refer back to it.
	sort.SliceStable(objs, func(i, j int) bool { return objs[i].id == source.id && objs[j].id != source.id })
	var pack bytes.Buffer
	pack.WriteString("PACK")
	_ = binary.Write(&pack, binary.BigEndian, uint32(2))
	_ = binary.Write(&pack, binary.BigEndian, uint32(len(objs)))
	offsets := map[string]uint64{}
	crcs := map[string]uint32{}
	for _, o := range objs {
		off := uint64(pack.Len())
		offsets[o.id] = off
		typ, data := packType(ts, o.typ), o.data
		var header []byte
		switch {
		case o.id == victim.id && delta:
			data = copyAllDelta(source.data)
			header = packEntryHeader(6, len(data)) // OFS_DELTA
			header = append(header, ofsDeltaOffset(off-offsets[source.id])...)
		case o.id == victim.id:
			typ, data = packType(ts, source.typ), source.data
			header = packEntryHeader(typ, len(data))
		default:
			header = packEntryHeader(typ, len(data))
		}
		var z bytes.Buffer
		zw := zlib.NewWriter(&z)
		_, _ = zw.Write(data)
		ts.Check(zw.Close())
		entry := append(header, z.Bytes()...)
		crcs[o.id] = crc32.ChecksumIEEE(entry)
		pack.Write(entry)
	}
	sum := sha1.Sum(pack.Bytes())
	pack.Write(sum[:])

	var idx bytes.Buffer
	idx.Write([]byte{0xff, 't', 'O', 'c', 0, 0, 0, 2})
	ids := make([]string, 0, len(objs))
	for _, o := range objs {
		ids = append(ids, o.id)
	}
	sort.Strings(ids)
	var fanout [256]uint32
	for _, id := range ids {
		b, _ := strconv.ParseUint(id[:2], 16, 8)
		for k := int(b); k < 256; k++ {
			fanout[k]++
		}
	}
	_ = binary.Write(&idx, binary.BigEndian, fanout)
	for _, id := range ids {
		raw, err := hex.DecodeString(id)
		ts.Check(err)
		idx.Write(raw)
	}
	for _, id := range ids {
		_ = binary.Write(&idx, binary.BigEndian, crcs[id])
	}
	for _, id := range ids {
		_ = binary.Write(&idx, binary.BigEndian, uint32(offsets[id])) // the packs here are small
	}
	idx.Write(sum[:])
	isum := sha1.Sum(idx.Bytes())
	idx.Write(isum[:])

	objects := filepath.Join(gitDir(ts), "objects")
	entries, err := os.ReadDir(objects)
	ts.Check(err)
	for _, e := range entries {
		if len(e.Name()) == 2 || e.Name() == "pack" {
			ts.Check(os.RemoveAll(filepath.Join(objects, e.Name())))
		}
	}
	ts.Check(os.MkdirAll(filepath.Join(objects, "pack"), 0o755))
	name := filepath.Join(objects, "pack", "pack-"+hex.EncodeToString(sum[:]))
	ts.Check(os.WriteFile(name+".pack", pack.Bytes(), 0o444))
	ts.Check(os.WriteFile(name+".idx", idx.Bytes(), 0o444))
}

// packType is the pack entry type of a git object type.
func packType(ts *testscript.TestScript, typ string) int {
	switch typ {
	case "commit":
		return 1
	case "tree":
		return 2
	case "blob":
		return 3
	case "tag":
		return 4
	}
	ts.Fatalf("object type %q", typ)
	return 0
}

// packEntryHeader is a pack entry's type and size: 3 bits of type, then the size in 4 and 7-bit
// groups, least significant first.
func packEntryHeader(typ, size int) []byte {
	c := byte(typ<<4) | byte(size&0x0f)
	size >>= 4
	var out []byte
	for size > 0 {
		out = append(out, c|0x80)
		c = byte(size & 0x7f)
		size >>= 7
	}
	return append(out, c)
}

// ofsDeltaOffset encodes how far back an OFS_DELTA's base is: 7-bit groups, most significant
// first, each continuation adding one.
func ofsDeltaOffset(rel uint64) []byte {
	out := []byte{byte(rel & 0x7f)}
	for rel >>= 7; rel > 0; rel >>= 7 {
		rel--
		out = append([]byte{byte(0x80 | rel&0x7f)}, out...)
	}
	return out
}

// copyAllDelta is a delta that copies all of base (at most 16 MiB) into the result.
func copyAllDelta(base []byte) []byte {
	varint := func(out []byte, v int) []byte {
		for v >= 0x80 {
			out = append(out, byte(v)|0x80)
			v >>= 7
		}
		return append(out, byte(v))
	}
	out := varint(varint(nil, len(base)), len(base))
	for off := 0; off < len(base); off += 0xffff {
		n := min(0xffff, len(base)-off)
		out = append(out, 0x80|0x0f|0x30, byte(off), byte(off>>8), byte(off>>16), byte(off>>24), byte(n), byte(n>>8))
	}
	return out
}

// cmdForgeGraph: forgegraph CHILD PARENT rewrites the commit-graph so that CHILD's first parent
// is PARENT, and recomputes the file's checksum: a single commit-graph, or the layer of a split
// chain that holds CHILD, which must be the top one (its new checksum renames it and is written
// into the chain file, as git names layers).
func cmdForgeGraph(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: forgegraph CHILD-REV PARENT-REV")
	}
	child := revObject(ts, args[0]).id
	parent := revObject(ts, args[1]).id
	info := filepath.Join(gitDir(ts), "objects", "info")
	var layers []string
	chainFile := filepath.Join(info, "commit-graphs", "commit-graph-chain")
	if _, err := os.Stat(filepath.Join(info, "commit-graph")); err == nil {
		layers = []string{filepath.Join(info, "commit-graph")}
	} else {
		chain, err := os.ReadFile(chainFile)
		ts.Check(err)
		for _, h := range strings.Fields(string(chain)) {
			layers = append(layers, filepath.Join(info, "commit-graphs", "graph-"+h+".graph"))
		}
	}
	first := uint32(0)
	childAt, parentAt := -1, uint32(0)
	var childData []byte
	var childPos uint32
	foundParent := false
	for li, path := range layers {
		data, err := os.ReadFile(path)
		ts.Check(err)
		oidl, _ := graphChunk(ts, data, "OIDL")
		n := uint32(len(oidl) / 20)
		for i := uint32(0); i < n; i++ {
			id := hex.EncodeToString(oidl[20*i : 20*i+20])
			if id == child {
				childAt, childData, childPos = li, data, i
			}
			if id == parent {
				parentAt, foundParent = first+i, true
			}
		}
		first += n
	}
	if childAt < 0 || !foundParent {
		ts.Fatalf("%s or %s is not in the commit-graph", child, parent)
	}
	if childAt != len(layers)-1 {
		ts.Fatalf("%s is not in the top layer of the commit-graph", child)
	}
	_, cdat := graphChunk(ts, childData, "CDAT")
	binary.BigEndian.PutUint32(childData[cdat+int(childPos)*36+20:], parentAt)
	sum := sha1.Sum(childData[:len(childData)-20])
	copy(childData[len(childData)-20:], sum[:])
	path := layers[childAt]
	if len(layers) == 1 && filepath.Base(path) == "commit-graph" {
		ts.Check(os.Chmod(path, 0o644))
		ts.Check(os.WriteFile(path, childData, 0o444))
		return
	}
	newPath := filepath.Join(filepath.Dir(path), "graph-"+hex.EncodeToString(sum[:])+".graph")
	ts.Check(os.WriteFile(newPath, childData, 0o444))
	ts.Check(os.Remove(path))
	chain, err := os.ReadFile(chainFile)
	ts.Check(err)
	lines := strings.Fields(string(chain))
	lines[len(lines)-1] = hex.EncodeToString(sum[:])
	ts.Check(os.Chmod(chainFile, 0o644))
	ts.Check(os.WriteFile(chainFile, []byte(strings.Join(lines, "\n")+"\n"), 0o444))
}

// graphChunk returns the chunk id of a commit-graph file and its offset.
func graphChunk(ts *testscript.TestScript, data []byte, id string) ([]byte, int) {
	count := int(data[6])
	for i := range count {
		e := data[8+12*i:]
		if string(e[:4]) == id {
			start := int(binary.BigEndian.Uint64(e[4:]))
			end := int(binary.BigEndian.Uint64(e[16:]))
			return data[start:end], start
		}
	}
	ts.Fatalf("commit-graph has no %s chunk", id)
	return nil, 0
}
