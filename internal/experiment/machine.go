package experiment

import "runtime"

func numCPU() int { return runtime.NumCPU() }
