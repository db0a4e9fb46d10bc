package tiers

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/vocab"
)

// TestParsePolicyMemoAnswersAsParsePolicy: the remembered answer equals ParsePolicy's, for a valid
// document and an invalid one, under the file name given; and a caller changing the Policy it got
// does not change what the next caller gets.
func TestParsePolicyMemoAnswersAsParsePolicy(t *testing.T) {
	valid := []byte(`{"stub_patterns": ["HACK"], "stub_cap": {"low": 9}, "evaluators": {"code_quality": ["qa-engineer"]}, "shared_globs": ["x.lock"]}`)
	invalid := []byte(`{"stub_patterns": ["("]}`)
	for _, doc := range [][]byte{valid, invalid} {
		for _, file := range []string{".geas/gate-policy.json", ".geas/gate-policy.json at base abc"} {
			want, wantErr := ParsePolicy(file, doc)
			require.Equal(t, string(doc) == string(invalid), wantErr != nil, "%s: %v", doc, wantErr)
			for range 2 {
				got, err := parsePolicy(file, doc)
				if wantErr != nil {
					require.Error(t, err)
					assert.Equal(t, wantErr.Error(), err.Error())
					continue
				}
				require.NoError(t, err)
				assert.Equal(t, want, got)
			}
		}
	}
	first, err := parsePolicy("p.json", valid)
	require.NoError(t, err)
	first.Evaluators["code_quality"][0] = "changed"
	first.Evaluators["new"] = []string{"x"}
	first.StubCap[vocab.RiskLow] = 0
	first.StubPatterns[0] = nil
	first.SharedGlobs[0] = "changed"
	second, err := parsePolicy("p.json", valid)
	require.NoError(t, err)
	want, err := ParsePolicy("p.json", valid)
	require.NoError(t, err)
	assert.Equal(t, want, second)
}

// TestPolicyCloneCopiesEveryMapAndSlice: every map and slice field of Policy is copied by clone,
// so a field added later that clone forgets fails here.
func TestPolicyCloneCopiesEveryMapAndSlice(t *testing.T) {
	p := DefaultPolicy()
	c := p.clone()
	pv, cv := reflect.ValueOf(p), reflect.ValueOf(c)
	for i := range pv.NumField() {
		f := pv.Type().Field(i)
		switch f.Type.Kind() {
		case reflect.Map, reflect.Slice:
			require.False(t, pv.Field(i).IsNil(), "%s: the defaults set it, so the check means something", f.Name)
			assert.NotEqual(t, pv.Field(i).Pointer(), cv.Field(i).Pointer(), "%s shares its storage", f.Name)
		case reflect.Pointer, reflect.Interface, reflect.Func, reflect.Chan:
			t.Errorf("%s: clone does not know this kind of field", f.Name)
		}
	}
	assert.Equal(t, p, c)
}
