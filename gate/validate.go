package gate

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/evidence"
	"github.com/geas-dev/geas/policy"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/schemas"
)

// ValidateFileFormat validates the file against the schema of kind (geas validate), with the
// checks the schema cannot express where the gate makes them: a contract's durations, regexes and
// paths, a policy's globs, regexes and durations, evidence and record as the gate parses them. For
// a valid file it also says which geas release's format it is (schemas.FormatOf: "1.0" or "1.4.0",
// by its shape; "" for a kind with one version).
func ValidateFileFormat(k schemas.Kind, file string) (format string, err error) {
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, evidence.DefaultMaxBytes+1))
	if err != nil {
		return "", err
	}
	if len(data) > evidence.DefaultMaxBytes {
		return "", fmt.Errorf("%s: larger than %d bytes", file, evidence.DefaultMaxBytes)
	}
	switch k {
	case schemas.Contract:
		_, err = contract.Parse(file, data)
	case schemas.Evidence:
		_, err = evidence.Parse(file, data)
	case schemas.Record:
		_, err = record.Parse(file, data)
	case schemas.GatePolicy:
		_, err = policy.Parse(file, data) // the gate's own checks too: globs, regexes, durations
	default:
		err = schemas.Validate(k, file, data)
	}
	var fe *evidence.FileError
	if errors.As(err, &fe) {
		err = fe.Err
	}
	if err != nil {
		return "", err
	}
	return schemas.FormatOf(k, data), nil
}
