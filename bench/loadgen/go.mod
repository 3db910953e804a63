module github.com/ferrymcp/ferry/bench/loadgen

go 1.26.0
