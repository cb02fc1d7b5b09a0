module github.com/kcbench/kcbench

go 1.26.8

require github.com/HdrHistogram/hdrhistogram-go v1.4.0

require (
	golang.org/x/crypto v0.58.0 // indirect
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
