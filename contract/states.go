package contract

import "github.com/geas-dev/geas/vocab"

// EligibleStates are the task states from which a profile may be gated (SPEC §5.1).
func EligibleStates(profile vocab.Profile) []vocab.State {
	switch profile {
	case vocab.ImplementationChange:
		return []vocab.State{vocab.Integrated}
	case vocab.ArtifactOnly:
		return []vocab.State{vocab.Reviewed}
	case vocab.ClosureReady:
		return []vocab.State{vocab.Reviewed, vocab.Integrated}
	}
	return nil
}
