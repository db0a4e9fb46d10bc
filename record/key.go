package record

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
)

// SigningKeyEnv names the environment variable that holds the history signing key.
const SigningKeyEnv = "GEAS_GATE_KEY"

// SigningKeyFileEnv names the environment variable that names a file holding the signing key:
// the way to give the gate a key that the eval commands, run as another user who cannot read
// the file, cannot reach (an environment variable is visible in /proc/PID/environ of every
// process that inherited it, to every process of the same user).
const SigningKeyFileEnv = "GEAS_GATE_KEY_FILE"

// maxKeyFileBytes bounds the key file: a key is a few dozen bytes, and a larger file is not one.
const maxKeyFileBytes = 4 << 10

// KeySource says where the signing key came from.
type KeySource string

// The sources of the signing key.
const (
	KeyNone KeySource = ""     // no key: the history is chained, not signed
	KeyEnv  KeySource = "env"  // $GEAS_GATE_KEY
	KeyFile KeySource = "file" // the file $GEAS_GATE_KEY_FILE names, read once at start
)

// keyFile is the key file as it was read, once a process (LoadSigningKey).
var keyFile struct {
	once sync.Once
	path string
	key  []byte
	err  error
}

// LoadSigningKey reads the key file $GEAS_GATE_KEY_FILE names, the first time it is called (geas
// calls it when it starts, before anything else); later calls return the first answer. The file
// must be a regular file of at most 4 KiB (opened without blocking, so a named pipe is refused
// rather than waited on); one trailing newline is not part of the key. Setting both
// GEAS_GATE_KEY and GEAS_GATE_KEY_FILE is an error: which key signs must never be a guess. An
// error here means every command that needs the key refuses to run: a key that cannot be read
// is never taken for no key, which would accept an unsigned history.
func LoadSigningKey() error {
	keyFile.once.Do(func() {
		path := os.Getenv(SigningKeyFileEnv)
		if path == "" {
			return
		}
		keyFile.path = path
		if os.Getenv(SigningKeyEnv) != "" {
			keyFile.err = fmt.Errorf("both %s and %s are set: set one", SigningKeyEnv, SigningKeyFileEnv)
			return
		}
		keyFile.key, keyFile.err = readKeyFile(path)
	})
	return keyFile.err
}

// readKeyFile reads the signing key from path (see LoadSigningKey).
func readKeyFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("read the signing key (%s): %w", SigningKeyFileEnv, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read the signing key (%s): %w", SigningKeyFileEnv, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("read the signing key (%s): %s is not a regular file (%s)", SigningKeyFileEnv, path, fi.Mode().Type())
	}
	b, err := io.ReadAll(io.LimitReader(f, maxKeyFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read the signing key (%s): %w", SigningKeyFileEnv, err)
	}
	if len(b) > maxKeyFileBytes {
		return nil, fmt.Errorf("read the signing key (%s): %s is larger than %d bytes, which no key is", SigningKeyFileEnv, path, maxKeyFileBytes)
	}
	b = bytes.TrimSuffix(bytes.TrimSuffix(b, []byte("\n")), []byte("\r"))
	if len(b) == 0 {
		return nil, fmt.Errorf("read the signing key (%s): %s is empty", SigningKeyFileEnv, path)
	}
	return b, nil
}

// SigningKeyErr is LoadSigningKey's error: the key file could not be read, or both variables are
// set. Commands that sign or verify refuse to run while it is set.
func SigningKeyErr() error { return LoadSigningKey() }

// SigningKey returns the key that signs gate_history entries: the bytes of $GEAS_GATE_KEY, or the
// key file's (LoadSigningKey), or nil when there is none (the history is then hash-chained but
// not signed) or the key file could not be read (SigningKeyErr says why). It is the only place
// that reads the key.
func SigningKey() []byte {
	if k := os.Getenv(SigningKeyEnv); k != "" {
		return []byte(k)
	}
	if LoadSigningKey() != nil {
		return nil
	}
	return keyFile.key
}

// SigningKeySource says where SigningKey's key comes from, and for a key file its path.
func SigningKeySource() (KeySource, string) {
	if os.Getenv(SigningKeyEnv) != "" {
		return KeyEnv, ""
	}
	if LoadSigningKey() == nil && keyFile.key != nil {
		return KeyFile, keyFile.path
	}
	return KeyNone, ""
}
