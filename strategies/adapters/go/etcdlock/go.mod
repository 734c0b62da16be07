module lockbench.invalid/etcdlock

go 1.26
