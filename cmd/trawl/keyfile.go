package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/trawl/trawl/internal/config"
)

const keyFileHelp = "key file that decrypts !ENC! passwords (default ~/.trawl/key when it exists; see trawl config encrypt)"

// passwordKey loads the key that decrypts "!ENC!" passwords: path, or the
// default key file when path is empty and that file exists. No key at all
// is not an error: a collection with encrypted passwords then fails with
// "no key" when it is set up.
func passwordKey(path string) (*config.Key, error) {
	if path == "" {
		def, err := config.DefaultKeyFile()
		if err != nil {
			return nil, nil
		}
		if _, err := os.Stat(def); errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		path = def
	}
	k, err := config.LoadKey(path)
	if err != nil {
		return nil, fmt.Errorf("key file: %w", err)
	}
	return k, nil
}
