module github.com/casckpt/casckpt

go 1.26.0

require (
	github.com/PlakarKorp/go-cdc-chunkers v1.1.0
	github.com/aymanbagabas/go-udiff v0.4.1
	github.com/klauspost/compress v1.20.3
	github.com/sabhiram/go-gitignore v0.0.0-20210923224102-525f6e181f06
	github.com/zeebo/blake3 v0.2.4
	go.etcd.io/bbolt v1.5.0
	golang.org/x/sync v0.24.0
	golang.org/x/sys v0.49.0
)

require github.com/klauspost/cpuid/v2 v2.0.12 // indirect
