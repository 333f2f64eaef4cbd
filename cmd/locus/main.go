// Command locus indexes fleets of git repositories for issue localization;
// its commands are package cli.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/locus-dev/locus/cli"
	"github.com/locus-dev/locus/internal/gcstart"
)

func main() {
	gcstart.Raise(cli.StartHeap)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}
