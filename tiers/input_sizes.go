package tiers

import (
	"fmt"

	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/record"
)

// checkSizes applies the effective policy's limits to the contract and the record, which are read
// (up to the fourfold ceiling every reader accepts) before the policy is known: a contract or a
// record over the effective limit is invalid, as one over the ceiling already is.
func (in *Snapshot) checkSizes() {
	if in.PolicyErr != nil {
		return // policy_invalid stops the run; the defaults would judge by limits nobody chose
	}
	if c := in.Contract; c != nil && int64(len(c.Raw)) > in.Policy.MaxContractBytes {
		in.Contract, in.ContractErr = nil, fmt.Errorf("read contract: %w", tooLarge(".geas/"+in.TaskDir+"/"+record.ContractFile, int64(len(c.Raw)), in.Policy.MaxContractBytes, "max_contract_bytes"))
	}
	if in.Record != nil && !in.RecordMissing {
		var files fsutil.Reader = fsutil.RootReader(in.Geas)
		if in.files != nil {
			files = in.files
		}
		fi, err := files.Stat(in.TaskDir + "/record.json")
		if err == nil && fi.Size()-in.historyBytes > in.Policy.MaxRecordBytes {
			in.Record, in.Facts, in.RecordErr = nil, nil, fmt.Errorf("load record: %w", tooLarge(".geas/"+in.TaskDir+"/record.json", fi.Size(), in.Policy.MaxRecordBytes, "max_record_bytes"))
		}
	}
}

func tooLarge(name string, size, limit int64, key string) error {
	return fmt.Errorf("%s: %d bytes exceeds the limit of %d bytes (%s, SPEC §10)", name, size, limit, key)
}

// historySectionBytes is the part of record.json's size that is the gate history kept in it by
// earlier layouts: the history has a limit of its own (max_history_bytes), so it does not count
// against the record's.
func historySectionBytes(f *record.Facts) int64 {
	if f.HistorySection == nil {
		return 0
	}
	return indentedLen(f.HistorySection, 1)
}
