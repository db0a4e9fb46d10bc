package schemas

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEachFormatIsToldByItsShape: geas v1.4.0's own examples are read as v1.4.0's, geas v1.0's
// and the gate's v1.0 fixtures as v1.0's, whatever version field either carries.
func TestEachFormatIsToldByItsShape(t *testing.T) {
	for _, tc := range []struct {
		kind Kind
		file string
		want string
	}{
		{Contract, "geas-v1.4-software.json", GeasV14},
		{Contract, "valid-minimal.json", "1.0"},
		{Evidence, "geas-v1.4-content.json", GeasV14}, // no version, no revision fields
		{Evidence, "geas-v1.4-software.json", GeasV14},
		{Evidence, "evidence.example.json", "1.0"},
		{Record, "geas-v1.4-research.json", GeasV14},
		{Record, "record.example.json", "1.0"},
		{DebtRegister, "valid-full.json", "1.0"},
		{DebtRegister, "geas-v1.4.example.json", "1.0"}, // carries the v1.0 envelope: read as v1.0's
		{GatePolicy, "valid-full.json", ""},
	} {
		b, err := os.ReadFile(filepath.Join(fixtureDir, string(tc.kind), tc.file))
		require.NoError(t, err)
		require.NoError(t, Validate(tc.kind, tc.file, b), tc.file)
		assert.Equal(t, tc.want, FormatOf(tc.kind, b), "%s/%s", tc.kind, tc.file)
	}
	// The geas v1.4.0 CLI writes version "1.0" into a contract: the slots still say v1.4.0.
	assert.Equal(t, GeasV14, FormatOf(Contract, []byte(`{"version":"1.0","routing":{"primary_worker_slot":"implementer"}}`)))
	assert.Equal(t, GeasV14, FormatOf(Evidence, []byte(`{"version":"1.0","revision_ref":"abc1234"}`)))
	assert.Equal(t, "", FormatOf(Record, []byte(`[`)))
}

// TestTheKindsThatReadGeasV14SaySo: a kind listed as reading geas v1.4.0's files says so in its
// schema, and only those.
func TestTheKindsThatReadGeasV14SaySo(t *testing.T) {
	for _, k := range Kinds() {
		src, err := Source(k)
		require.NoError(t, err)
		says := strings.Contains(string(src), "v1.4.0")
		assert.Equal(t, says, len(FormatVersions(k)) == 2, "%s: %v", k, FormatVersions(k))
	}
	assert.Equal(t, []string{"1.0", GeasV14}, FormatVersions(Contract))
	assert.Empty(t, FormatVersions(GatePolicy))
}

// FuzzFormatOf: FormatOf never panics and answers one of the versions the kind reads, or "".
func FuzzFormatOf(f *testing.F) {
	for _, k := range []Kind{Contract, Record, Evidence, DebtRegister} {
		files, _ := filepath.Glob(filepath.Join(fixtureDir, string(k), "*.json"))
		for _, p := range files {
			b, err := os.ReadFile(p)
			require.NoError(f, err)
			f.Add(b)
		}
	}
	f.Add([]byte(`{"routing":{"primary_worker_slot":null}}`))
	f.Add([]byte(`{"self_check":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, k := range Kinds() {
			got := FormatOf(k, data)
			if got != "" && !slices.Contains(FormatVersions(k), got) {
				t.Fatalf("%s: %q is not a version %s reads (%v)", k, got, k, FormatVersions(k))
			}
		}
	})
}
