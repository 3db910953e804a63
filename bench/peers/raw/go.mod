module github.com/ferrymcp/ferry/bench/peers/raw

go 1.26.0

require github.com/ferrymcp/ferry/bench/loadgen v0.0.0

replace github.com/ferrymcp/ferry/bench/loadgen => ../../loadgen
