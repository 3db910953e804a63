module github.com/ferrymcp/ferry/interop

go 1.26

replace github.com/ferrymcp/ferry => ../
