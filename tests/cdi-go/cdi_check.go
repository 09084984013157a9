// cdi_check: reads each CDI spec file given with Debian's Go CDI library
// (golang-github-container-orchestrated-devices-container-device-interface-dev),
// a parser and validator independent of ours, and prints "FILE: ok" or
// "FILE: rejected: WHY".  Exit status 1 if any file was rejected.
package main

import (
	"fmt"
	"os"

	"github.com/container-orchestrated-devices/container-device-interface/pkg/cdi"
)

func main() {
	status := 0
	for _, path := range os.Args[1:] {
		spec, err := cdi.ReadSpec(path, 0)
		if err != nil {
			fmt.Printf("%s: rejected: %v\n", path, err)
			status = 1
			continue
		}
		fmt.Printf("%s: ok (%s, %d devices)\n", path, spec.GetClass(), len(spec.Devices))
	}
	os.Exit(status)
}
