module github.com/kcbench/kcbench

go 1.26.8

require github.com/HdrHistogram/hdrhistogram-go v1.4.0 // indirect
