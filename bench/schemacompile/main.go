// Command schemacompile measures, in its own fresh process, a process's schema compile: the CPU
// time (user + system, from getrusage) of compiling the schemas a dry gate run compiles
// (contract, evidence, record), by validating one small document of each kind. A Go
// benchmark loops the compile and so also pays the collector for earlier iterations' garbage; a
// gate process compiles once on a fresh heap and runs no collection (GODEBUG=gctrace=1 prints none
// on the bench task), which this measures. bench/schema_compile.sh runs it many times.
//
//	schemacompile
//
// It prints the CPU time in microseconds.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/geas-dev/geas/schemas"
)

func main() {
	us, err := run()
	if err != nil {
		fmt.Fprintln(os.Stderr, "schemacompile:", err)
		os.Exit(1)
	}
	fmt.Println(us)
}

// run compiles the three schemas once and returns the CPU time it took in microseconds.
func run() (int64, error) {
	docs := []struct {
		k    schemas.Kind
		file string
	}{
		{schemas.Contract, "contract.json"},
		{schemas.Evidence, "evidence/x.json"},
		{schemas.Record, "record.json"},
	}
	before, err := cpu()
	if err != nil {
		return 0, err
	}
	for _, d := range docs {
		// An empty object is valid for no kind; the compile happens all the same, and the
		// validation of an empty object costs microseconds. Any other answer (a compile error)
		// fails the measurement.
		var ve *schemas.ValidationError
		if err := schemas.Validate(d.k, d.file, []byte(`{}`)); !errors.As(err, &ve) {
			return 0, fmt.Errorf("an empty %s gave %v, not a validation error", d.k, err)
		}
	}
	after, err := cpu()
	if err != nil {
		return 0, err
	}
	return (after - before).Microseconds(), nil
}
