package cmd

import (
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/geas-dev/geas/gate"
	"github.com/geas-dev/geas/vocab"
)

// mcpOutputSchema is the outputSchema of a tool whose structured result is a T: the schema the
// SDK would infer from T's fields (every field without omitempty required, no other property),
// with the gate's vocabulary as enums and gate_profile's null (vocab.Profile writes the unknown
// profile as null, which the inferred "string" would refuse). The SDK validates every result
// against it before sending, so a result the schema does not describe is a tool error rather
// than a client surprise; TestMCPResultsMatchTheirOutputSchemas validates real results of
// every tool with a second validator.
func mcpOutputSchema[T any]() (*jsonschema.Schema, error) {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: mcpTypeSchemas()})
	if err != nil {
		return nil, fmt.Errorf("output schema of %v: %w", reflect.TypeFor[T](), err)
	}
	return s, nil
}

// mcpTypeSchemas are the schemas of the vocabulary types a tool result holds.
func mcpTypeSchemas() map[reflect.Type]*jsonschema.Schema {
	profiles := []any{nil}
	for _, p := range []vocab.Profile{vocab.ImplementationChange, vocab.ArtifactOnly, vocab.ClosureReady} {
		profiles = append(profiles, string(p))
	}
	var states []any
	for _, s := range vocab.States() {
		states = append(states, string(s))
	}
	statuses := []any{}
	for _, s := range []gate.Status{gate.StatusPass, gate.StatusFail, gate.StatusBlock, gate.StatusError, gate.StatusWarn, gate.StatusSkipped} {
		statuses = append(statuses, string(s))
	}
	verify := []any{}
	for _, s := range []gate.VerifyStatus{gate.VerifyIntact, gate.VerifyRevoked, gate.VerifyTampered} {
		verify = append(verify, string(s))
	}
	return map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[vocab.Profile](): {Types: []string{"null", "string"}, Enum: profiles,
			Description: "the contract's gate_profile; null when the contract could not be read"},
		reflect.TypeFor[vocab.Verdict]():     {Type: "string", Enum: []any{"pass", string(vocab.VerdictFail), string(vocab.VerdictBlock), string(vocab.VerdictError)}},
		reflect.TypeFor[vocab.State]():       {Type: "string", Enum: states},
		reflect.TypeFor[gate.Status]():       {Type: "string", Enum: statuses},
		reflect.TypeFor[gate.VerifyStatus](): {Type: "string", Enum: verify},
	}
}
