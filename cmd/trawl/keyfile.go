package main

import "github.com/trawl/trawl/internal/config"

const keyFileHelp = config.KeyFileHelp

// passwordKey loads the key of --key-file (config.PasswordKey).
func passwordKey(path string) (*config.Key, error) { return config.PasswordKey(path) }
