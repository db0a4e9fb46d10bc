package policy

import (
	"bytes"
	"encoding/json"
	"strings"
)

// ExampleFile is the example policy geas init writes beside where the policy would be. The
// gate never reads it (it reads File only), so writing it changes no default.
const ExampleFile = "gate-policy.example.json"

// examplePolicyComment is the "//" of the example policy: JSON has no comments, and the policy
// schema allows this one key for them.
var examplePolicyComment = []string{
	"An example of .geas/gate-policy.json. Every value here is the gate's built-in default (SPEC §10),",
	"and the gate never reads this file. To change a default, copy this file to .geas/gate-policy.json",
	"and keep only the settings you change: a setting that is absent keeps its default.",
	"geas schema gate-policy describes every setting; geas validate checks the file.",
	"The policy is part of each task's pinned rules: once a task is pinned, changing the policy blocks",
	"it (rules_changed) until an authority approves (geas task approve). For a task with a base, the",
	"policy is read from the base commit when it is tracked there.",
}

// Example returns the example policy: the built-in defaults written as a policy document,
// after a "//" comment that says how to use it. Parse reads it as Default.
func Example() []byte {
	d := Default()
	doc := policyDocument{
		Evaluators: d.Evaluators, StubCap: map[string]int{}, SharedGlobs: d.SharedGlobs,
		EvalTimeout: d.EvalTimeout.String(), OutputTailBytes: d.OutputTailBytes,
		ConsecutiveErrorLimit: d.ConsecutiveErrorLimit, JudgeIndependence: d.JudgeIndependence,
		MaxEvidenceBytes: d.MaxEvidenceBytes, EvalCheckout: d.EvalCheckout, KeyExposure: d.KeyExposure,
		MaxTotalEvidenceBytes: d.MaxTotalEvidenceBytes, MaxContractBytes: d.MaxContractBytes,
		MaxRecordBytes: d.MaxRecordBytes, MaxHistoryBytes: d.MaxHistoryBytes,
		Tests: &policyTests{Integrity: "on", Protected: d.Tests.Protected, Markers: &policyMarkers{
			Skip: defaultSkipMarkers, Assert: defaultAssertMarkers, Suppress: defaultSuppressMarkers}},
	}
	for level, n := range d.StubCap {
		doc.StubCap[string(level)] = n
	}
	for _, re := range d.StubPatterns {
		// The defaults are compiled case-insensitively; the policy's patterns get (?i) on reading.
		doc.StubPatterns = append(doc.StubPatterns, strings.TrimPrefix(re.String(), "(?i)"))
	}
	body := marshalIndent(doc, "")
	comment := marshalIndent(examplePolicyComment, "  ")
	var b bytes.Buffer
	b.WriteString("{\n  \"//\": ")
	b.Write(comment)
	b.WriteString(",\n")
	b.Write(bytes.TrimPrefix(body, []byte("{\n")))
	b.WriteString("\n")
	return b.Bytes()
}

func marshalIndent(v any, prefix string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent(prefix, "  ")
	if err := enc.Encode(v); err != nil {
		panic(err) // a policyDocument and a []string always encode
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
