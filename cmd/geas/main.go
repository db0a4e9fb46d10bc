// Command geas is the geas gate command line; see the cmd package.
package main

import (
	"os"

	"github.com/geas-dev/geas/cmd"
)

func main() { os.Exit(cmd.Main()) }
