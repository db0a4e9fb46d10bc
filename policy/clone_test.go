package policy

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPolicyCloneCopiesEveryMapAndSlice: every map and slice field of Policy is copied by Clone,
// so a field added later that Clone forgets fails here.
func TestPolicyCloneCopiesEveryMapAndSlice(t *testing.T) {
	p := Default()
	c := p.Clone()
	pv, cv := reflect.ValueOf(p), reflect.ValueOf(c)
	for i := range pv.NumField() {
		f := pv.Type().Field(i)
		switch f.Type.Kind() {
		case reflect.Map, reflect.Slice:
			require.False(t, pv.Field(i).IsNil(), "%s: the defaults set it, so the check means something", f.Name)
			assert.NotEqual(t, pv.Field(i).Pointer(), cv.Field(i).Pointer(), "%s shares its storage", f.Name)
		case reflect.Pointer, reflect.Interface, reflect.Func, reflect.Chan:
			t.Errorf("%s: Clone does not know this kind of field", f.Name)
		}
	}
	assert.Equal(t, p, c)
}
