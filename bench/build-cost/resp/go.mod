module example.com/buildcost/resp

go 1.26
