package report

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/tiers"
)

// TestJUnitShowsEvalOutput: an eval command's testcase carries the tail of its output in
// <system-out>, line by line as the command printed it, when it failed (beside the <failure>) and
// when it passed (after its exit and time); a tail cut from longer output says how much it is; a
// check that ran no command has none.
func TestJUnitShowsEvalOutput(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, writeJUnit(&out, recordedResults(t), false))
	var doc junitDoc
	require.NoError(t, xml.Unmarshal(out.Bytes(), &doc))
	found := map[string]bool{}
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			switch {
			case s.Name == "t1/tier_1" && c.Name == "eval_command_2":
				require.NotNil(t, c.Failure)
				assert.Equal(t, "output:\nFAIL: TestGreet\n want: Hello\n got: Hi", c.SystemOut)
				found["fail"] = true
			case s.Name == "t1/tier_1" && c.Name == "eval_command_1":
				assert.Nil(t, c.Failure)
				assert.True(t, strings.HasPrefix(c.SystemOut, "exit 0 in 31ms"), "%q", c.SystemOut)
				assert.True(t, strings.HasSuffix(c.SystemOut, "\n\noutput:\nbuilding\nok 12 tests"), "%q", c.SystemOut)
				found["pass"] = true
			case !strings.HasPrefix(c.Name, "eval_command_") && !strings.HasPrefix(c.Name, "criterion:"):
				assert.NotContains(t, c.SystemOut, "output:", "%s/%s ran no command", s.Name, c.Name)
			}
		}
	}
	assert.Len(t, found, 2, "found %v", found)

	run := tiers.EvalRun{OutputTail: "last line\n", OutputBytes: 40000}
	assert.Equal(t, "exit 1\n\noutput (the last 10 of 40000 bytes):\nlast line", junitOutput("exit 1", run))
	assert.Equal(t, "exit 0", junitOutput("exit 0", tiers.EvalRun{}), "no output, nothing added")
}

// TestJUnitAllWritesNoEmptySuites: geas gate --all leaves out the suites of tiers that did not run
// (an error at tier 0 stops the rest), keeping every suite with a testcase and the counts; a
// single run keeps them, their properties saying why the tier did not run.
func TestJUnitAllWritesNoEmptySuites(t *testing.T) {
	var all, one bytes.Buffer
	require.NoError(t, For(JUnit).All(&all, &bytes.Buffer{}, recordedAll(t)))
	require.NoError(t, writeJUnit(&one, recordedAll(t).Results(), false))
	var a, o junitDoc
	require.NoError(t, xml.Unmarshal(all.Bytes(), &a))
	require.NoError(t, xml.Unmarshal(one.Bytes(), &o))
	var empty int
	for _, s := range o.Suites {
		if len(s.Cases) == 0 {
			empty++
		}
	}
	require.Positive(t, empty, "the recorded runs have tiers that did not run")
	assert.Len(t, a.Suites, len(o.Suites)-empty)
	for _, s := range a.Suites {
		assert.NotEmpty(t, s.Cases, "suite %s is empty", s.Name)
	}
	assert.Equal(t, o.Tests, a.Tests)
	assert.Equal(t, o.Failures, a.Failures)
	assert.Equal(t, o.Errors, a.Errors)
	assert.Equal(t, o.Skipped, a.Skipped)
}
