module github.com/c2cluster/c2cluster

go 1.26.8

require github.com/consensys/gnark-crypto v0.19.0

require (
	github.com/bits-and-blooms/bitset v1.24.0 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	golang.org/x/sys v0.49.0 // indirect
)
